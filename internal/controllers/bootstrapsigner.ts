// The bootstrap signer: ConfigMap cluster-info in svc-public carries, for every
// valid bootstrap token meant for signing, a key jws-kubeconfig-<id> holding a
// detached HS256 JWS over its `kubeconfig` (keyed by the whole token); keys of
// tokens that expired, stopped signing or are gone are removed. The gateway
// creates the ConfigMap (gateway/clusterinfo.ts); without it there is nothing to sign.
import { isDeepStrictEqual } from 'node:util';
import { KEY_USAGE_SIGNING, detachedSignature, expiresAt, usableToken } from '../bootstraptoken/index.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { CLUSTER_INFO_CONFIGMAP, CLUSTER_INFO_JWS_PREFIX, CLUSTER_INFO_KUBECONFIG_KEY, NAMESPACE_PUBLIC } from '../names/index.js';
import { Deadlines, bootstrapSecretInformer } from './bootstraptokens.js';

const CONFIGMAPS = `/api/v1/namespaces/${NAMESPACE_PUBLIC}/configmaps`;
const CLUSTER_INFO = `${CONFIGMAPS}/${CLUSTER_INFO_CONFIGMAP}`;
const RETRY_MS = 1000;
const RESIGN = 'resign';

export class BootstrapSigner {
  private readonly secrets: Informer;
  private readonly configMaps: Informer;
  private readonly deadlines = new Deadlines(() => this.schedule(0));
  private scheduled = false;
  private running = false;

  constructor(private readonly client: ApiClient) {
    const changed = () => this.schedule(0);
    this.secrets = bootstrapSecretInformer(client, { upsert: changed, deleted: changed });
    this.configMaps = new Informer(client, `${CONFIGMAPS}?fieldSelector=${encodeURIComponent(`metadata.name=${CLUSTER_INFO_CONFIGMAP}`)}`, { upsert: changed, deleted: changed });
  }

  async start(): Promise<void> {
    await Promise.all([this.secrets.start(), this.configMaps.start()]);
    this.schedule(0);
  }

  stop(): void {
    this.secrets.stop();
    this.configMaps.stop();
    this.deadlines.clearAll();
  }

  /** One pass after a burst of changes; passes never overlap. */
  private schedule(delayMs: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      if (this.running) return this.schedule(RETRY_MS);
      this.running = true;
      this.sync().catch((err) => {
        console.error(`bootstrap-signer: ${(err as Error).message}`);
        this.schedule(RETRY_MS);
      }).finally(() => { this.running = false; });
    }, delayMs);
  }

  private async sync(): Promise<void> {
    const current = this.configMaps.store.get(`${NAMESPACE_PUBLIC}/${CLUSTER_INFO_CONFIGMAP}`);
    if (!current) return;
    const data = (current.data ?? {}) as Record<string, string>;
    const content = data[CLUSTER_INFO_KUBECONFIG_KEY];
    if (content === undefined) return;
    const wanted = await this.signatures(content);
    const kept = Object.fromEntries(Object.entries(data).filter(([k]) => !k.startsWith(CLUSTER_INFO_JWS_PREFIX)));
    const next = { ...kept, ...wanted };
    if (isDeepStrictEqual(next, data)) return;
    const res = await this.client.request('PUT', CLUSTER_INFO, { ...current, data: next });
    // A conflict means a newer cluster-info is on its way through the informer, which schedules the next pass.
    if (res.status !== 200 && res.status !== 409) throw new Error(`update ${CLUSTER_INFO_CONFIGMAP}: ${res.status} ${res.body?.message ?? ''}`);
  }

  /** The signatures of the tokens that sign now; the next expiry among them triggers a new pass. */
  private async signatures(content: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    let nextExpiry = Infinity;
    for (const secret of this.secrets.store.values()) {
      const token = usableToken(secret, KEY_USAGE_SIGNING);
      if (!token) continue;
      out[`${CLUSTER_INFO_JWS_PREFIX}${token.id}`] = await detachedSignature(content, token.id, token.secret);
      nextExpiry = Math.min(nextExpiry, expiresAt(secret) ?? Infinity);
    }
    if (Number.isFinite(nextExpiry)) this.deadlines.set(RESIGN, nextExpiry + 1);
    else this.deadlines.clear(RESIGN);
    return out;
  }
}

