// A real conversion webhook for tests: HTTPS on 127.0.0.1 with a certificate of
// its own CA (valid for the loopback address and a service's DNS name), answering
// ConversionReviews. Objects move between `v1` (spec.color) and `v2`
// (spec.colour); the request path picks a misbehaviour to test the server's checks.
import https from 'node:https';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

export type Mode = 'convert' | 'wrong-uid' | 'failure' | 'drop' | 'rename' | 'relabel' | 'not-json';

/** An object of one version as the other: the colour field renamed, the apiVersion set. */
export function convertObject(obj: any, desiredAPIVersion: string): any {
  const out = structuredClone(obj);
  const spec = out.spec ?? {};
  if (desiredAPIVersion.endsWith('/v2') && 'color' in spec) { spec.colour = spec.color; delete spec.color; }
  if (desiredAPIVersion.endsWith('/v1') && 'colour' in spec) { spec.color = spec.colour; delete spec.colour; }
  out.apiVersion = desiredAPIVersion;
  return out;
}

export class ConversionWebhook {
  readonly reviews: Array<{ path: string; review: any }> = [];
  port = 0;
  caPem = '';
  private server?: https.Server;

  /** Its CA, a serving certificate for 127.0.0.1 and `hosts`, and a free loopback port. */
  async start(hosts: string[] = []): Promise<this> {
    const caPem = await createCa('conversion-webhook-ca', 1);
    const serving = await issueLeaf(await loadCa(caPem.certPem, caPem.keyPem), { commonName: 'conversion-webhook', hosts: ['127.0.0.1', ...hosts], usage: 'server', validityDays: 1 });
    this.caPem = caPem.certPem;
    this.server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const path = (req.url ?? '').split('?')[0];
        this.reviews.push({ path: req.url ?? '', review });
        const mode = path.slice(1) as Mode;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(mode === 'not-json' ? 'not json' : JSON.stringify(answer(mode, review)));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** The caBundle of a clientConfig trusting this webhook. */
  get caBundle(): string {
    return Buffer.from(this.caPem).toString('base64');
  }

  url(mode: Mode = 'convert'): string {
    return `https://127.0.0.1:${this.port}/${mode}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function answer(mode: Mode, review: any): unknown {
  const { uid, desiredAPIVersion, objects } = review.request;
  let converted = objects.map((o: any) => convertObject(o, desiredAPIVersion));
  if (mode === 'drop') converted = converted.slice(1);
  if (mode === 'rename') converted = converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, name: `${o.metadata.name}-renamed` } }));
  if (mode === 'relabel') {
    converted = converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, converted: 'yes' }, generation: 99, annotations: undefined } }));
  }
  const result = mode === 'failure' ? { status: 'Failure', message: 'cannot convert a widget today' } : { status: 'Success' };
  return {
    apiVersion: review.apiVersion, kind: 'ConversionReview',
    response: { uid: mode === 'wrong-uid' ? 'someone-else' : uid, result, ...(mode === 'failure' ? {} : { convertedObjects: converted }) },
  };
}
