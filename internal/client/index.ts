// A client of the gateway's HTTPS API, as controllers use it: JSON requests,
// lists that follow continue tokens, watches as streams of events, and the
// resources discovery announces.
import https from 'node:https';
import type { ApiObject } from '../apimachinery/meta.js';
import type { ResourceEntry } from '../registry/resources.js';
import { GROUP_APIDISCOVERY, GROUP_META } from '../names/index.js';

export interface ClientOptions {
  /** `https://host:port` of a gateway. */
  server: string;
  ca: Buffer;
  /** The client certificate that authenticates requests, unless a `token` does. */
  cert?: Buffer;
  key?: Buffer;
  /** Bearer tokens that authenticate requests instead of a certificate (a service account's). */
  token?: TokenSource;
  /** The client informers list and watch with (default: this one), as the platform's shared informers read
   * with the controller-manager's own identity while each controller writes as its service account. */
  informers?: ApiClient;
  userAgent: string;
}

/** Where a client's bearer token comes from: a valid one on demand, and a way to drop one the server refused. */
export interface TokenSource {
  token(): Promise<string>;
  /** Forgets the token when it was obtained before `since` (ms): the next request asks for a new one. */
  reset(since: number): void;
}

export interface Response<T = any> {
  status: number;
  body: T;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: ApiObject & { code?: number };
}

/** A served resource, as discovery announces it: where its collection is, its kind, and what it allows. */
export type Resource = Omit<ResourceEntry, 'subresources'>;

/** Objects per list request: a collection of any size is read a page at a time. */
const LIST_PAGE = 500;
/** The representation a list or watch asks for: whole objects, or their metadata only (PartialObjectMetadata). */
export type Representation = 'object' | 'metadata';
const metadataAs = (as: string) => `application/json;as=${as};g=${GROUP_META};v=v1,application/json`;
const ACCEPT = {
  get: { object: 'application/json', metadata: metadataAs('PartialObjectMetadata') },
  list: { object: 'application/json', metadata: metadataAs('PartialObjectMetadataList') },
  watch: { object: 'application/json', metadata: metadataAs('PartialObjectMetadata') },
};
const ACCEPT_AGGREGATED_DISCOVERY = `application/json;g=${GROUP_APIDISCOVERY};v=v2;as=APIGroupDiscoveryList`;
/** The parts of an aggregated discovery document (`APIGroupDiscoveryList`) that `resources` reads; versions come
 * most preferred first. */
interface AggregatedDiscovery {
  kind?: string;
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{ version: string; resources?: Array<{ resource: string; responseKind?: { kind?: string }; scope?: string; verbs?: string[] }> }>;
  }>;
}
/** As client-go: an answer that says Retry-After (429, or a 5xx) is tried again this many times at most. */
const MAX_RETRIES = 10;
/** Retry-After is obeyed up to this many seconds. */
const MAX_RETRY_AFTER_S = 10;

/** The seconds a 429 or 5xx answer asks the client to wait before trying again; undefined when it asks for no retry. */
function retryAfter(status: number, header: string | string[] | undefined): number | undefined {
  if (status !== 429 && (status < 500 || status > 599)) return undefined;
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return header !== undefined && Number.isInteger(seconds) && seconds >= 0 ? Math.min(seconds, MAX_RETRY_AFTER_S) : undefined;
}

export class ApiClient {
  private readonly agent: https.Agent;
  private readonly url: URL;

  constructor(private readonly opts: ClientOptions) {
    this.url = new URL(opts.server);
    // A token-authenticated client presents no certificate: the gateway would authenticate that first.
    const identity = opts.token ? {} : { cert: opts.cert, key: opts.key };
    this.agent = new https.Agent({ keepAlive: true, ca: opts.ca, ...identity });
  }

  /** The client informers list and watch with. */
  get informerClient(): ApiClient {
    return this.opts.informers ?? this;
  }

  private async options(method: string, path: string, headers: Record<string, string>): Promise<https.RequestOptions> {
    const auth: Record<string, string> = this.opts.token ? { Authorization: `Bearer ${await this.opts.token.token()}` } : {};
    return {
      host: this.url.hostname, port: this.url.port || 443, method, path, agent: this.agent,
      headers: { 'User-Agent': this.opts.userAgent, Accept: 'application/json', ...auth, ...headers },
    };
  }

  /** One request; the body as JSON (a string body is sent as it is, with `contentType`). An overloaded or
   * unavailable server's answer with Retry-After is retried after the wait it asks for. */
  request<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Response<T>> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = payload === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(payload)) };
    return this.retrying(method, path, headers, payload);
  }

  /** One object, whole or its metadata only (a server without the view answers the whole object). */
  get<T = ApiObject>(path: string, as: Representation = 'object'): Promise<Response<T>> {
    return this.retrying('GET', path, { Accept: ACCEPT.get[as] });
  }

  /** Sends until the answer asks for no retry (or the retries run out). A token refused (401) is dropped and the
   * request sent once more with a new one, as a token may expire or its account be deleted and made again. */
  private async retrying<T>(method: string, path: string, headers: Record<string, string>, payload?: string): Promise<Response<T>> {
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      const sentAt = Date.now();
      const { wait, ...res } = await this.send<T>(method, path, headers, payload);
      if (res.status === 401 && this.opts.token && !renewed) {
        this.opts.token.reset(sentAt);
        renewed = true;
        continue;
      }
      if (wait === undefined || attempt >= MAX_RETRIES) return res;
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }

  private async send<T>(method: string, path: string, headers: Record<string, string>, payload: string | undefined): Promise<Response<T> & { wait?: number }> {
    const options = await this.options(method, path, headers);
    return new Promise((resolve, reject) => {
      const req = https.request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON: kept as text */ }
          const status = res.statusCode ?? 0;
          resolve({ status, body: parsed as T, wait: retryAfter(status, res.headers['retry-after']) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Every item of a collection, page by page, and the resourceVersion to watch from; `keep` says what is kept
   * of each item as its page arrives (so a large collection is never held whole). */
  async list(path: string, as: Representation = 'object', keep: (obj: ApiObject) => ApiObject = (obj) => obj): Promise<{ items: ApiObject[]; resourceVersion: string }> {
    const items: ApiObject[] = [];
    let token = '';
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const res = await this.retrying<any>('GET', `${path}${sep}limit=${LIST_PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`, { Accept: ACCEPT.list[as] });
      if (res.status !== 200) throw new Error(`list ${path}: ${res.status} ${res.body?.message ?? ''}`);
      for (const item of res.body.items ?? []) items.push(keep(item));
      token = res.body.metadata?.continue ?? '';
      if (!token) return { items, resourceVersion: res.body.metadata?.resourceVersion ?? '' };
    }
  }

  /**
   * Follows a collection from a resourceVersion; `onEvent` gets each event,
   * `onEnd` is called once the stream ends (with the reason when it failed).
   */
  watch(path: string, resourceVersion: string, onEvent: (ev: WatchEvent) => void, onEnd: (err?: Error) => void, as: Representation = 'object'): { stop(): void } {
    const sep = path.includes('?') ? '&' : '?';
    const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`;
    let req: ReturnType<typeof https.request> | undefined;
    let stopped = false;
    this.options('GET', `${path}${sep}${query}`, { Accept: ACCEPT.watch[as] }).then((options) => {
      if (!stopped) req = this.follow(path, options, onEvent, onEnd);
    }, (err: Error) => { if (!stopped) onEnd(err); });
    return { stop: () => { stopped = true; req?.destroy(); } };
  }

  private follow(path: string, options: https.RequestOptions, onEvent: (ev: WatchEvent) => void, onEnd: (err?: Error) => void): ReturnType<typeof https.request> {
    const req = https.request(options, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        onEnd(new Error(`watch ${path}: ${res.statusCode}`));
        return;
      }
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) onEvent(JSON.parse(line) as WatchEvent);
        }
      });
      // 'close' comes however the stream ends; one that did not complete was cut off.
      res.on('close', () => onEnd(res.complete ? undefined : new Error(`watch ${path}: cut off`)));
      res.on('error', () => undefined);
    });
    req.on('error', (err) => onEnd(err));
    req.end();
    return req;
  }

  /** The resources of every served group's preferred version, from the two aggregated discovery documents
   * (`/api` and `/apis`), as client-go reads them, instead of one request per group version. */
  async resources(): Promise<Resource[]> {
    const out: Resource[] = [];
    for (const path of ['/api', '/apis']) {
      const res = await this.retrying<AggregatedDiscovery>('GET', path, { Accept: ACCEPT_AGGREGATED_DISCOVERY });
      if (res.status !== 200 || res.body?.kind !== 'APIGroupDiscoveryList') throw new Error(`discovery ${path}: ${res.status}`);
      for (const g of res.body.items ?? []) {
        const preferred = g.versions?.[0];
        for (const r of preferred?.resources ?? []) {
          out.push({ group: g.metadata?.name ?? '', version: preferred!.version, resource: r.resource, kind: r.responseKind?.kind ?? '', namespaced: r.scope === 'Namespaced', verbs: r.verbs ?? [] });
        }
      }
    }
    return out;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The path of a resource's collection, across namespaces or in one. */
export function collectionPath(r: Pick<Resource, 'group' | 'version' | 'resource'>, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return namespace ? `${base}/namespaces/${namespace}/${r.resource}` : `${base}/${r.resource}`;
}
