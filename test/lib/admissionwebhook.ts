// A real admission webhook for tests: HTTPS on 127.0.0.1 with a certificate of
// its own CA (valid for the loopback address and the service names given),
// answering AdmissionReviews. The request path picks the behaviour; every
// review received is kept, with its path.
import https from 'node:https';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

export interface Received { path: string; review: any }

/** A JSON patch adding `labels` to the object's labels. */
function labelPatch(object: any, labels: Record<string, string>): unknown[] {
  if (!object?.metadata?.labels) return [{ op: 'add', path: '/metadata/labels', value: labels }];
  return Object.entries(labels).map(([k, v]) => ({ op: 'add', path: `/metadata/labels/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: v }));
}

function answer(path: string, review: any): unknown {
  const { uid, object } = review.request;
  const response: Record<string, unknown> = { uid, allowed: true };
  const [, verb, arg] = path.split('/');
  switch (verb) {
    case 'deny': Object.assign(response, { allowed: false, status: { message: `no ${review.request.name} today` }, warnings: ['deny looked at it'] }); break;
    case 'deny-invalid': Object.assign(response, { allowed: false, status: { code: 422, reason: 'Invalid', message: 'spec is wrong' } }); break;
    case 'mutate':
      Object.assign(response, {
        patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(labelPatch(object, { [arg ?? 'mutated']: 'yes' }))).toString('base64'),
        warnings: [`${arg ?? 'mutated'} added`], auditAnnotations: { touched: 'yes' },
      });
      break;
    case 'wrong-uid': response.uid = 'not-the-request'; break;
    default: break;
  }
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response };
}

export class AdmissionWebhook {
  readonly received: Received[] = [];
  port = 0;
  caPem = '';
  private server?: https.Server;

  async start(hosts: string[] = []): Promise<this> {
    const ca = await createCa('admission-webhook-ca', 1);
    const serving = await issueLeaf(await loadCa(ca.certPem, ca.keyPem), { commonName: 'admission-webhook', hosts: ['127.0.0.1', ...hosts], usage: 'server', validityDays: 1 });
    this.caPem = ca.certPem;
    this.server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0];
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        this.received.push({ path: req.url ?? '', review });
        const reply = () => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(path === '/garbage' ? '{"this is": not json' : JSON.stringify(answer(path, review)));
        };
        if (path === '/slow') setTimeout(reply, 2_500).unref(); else reply();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get caBundle(): string {
    return Buffer.from(this.caPem).toString('base64');
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** The reviews received on a path (its query left out). */
  on(path: string): any[] {
    return this.received.filter((r) => r.path.split('?')[0] === path).map((r) => r.review);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
