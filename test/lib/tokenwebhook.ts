// A real TokenReview webhook for tests: HTTPS on 127.0.0.1 with a certificate
// of a test CA, requiring the caller's client certificate of another; answers
// each review with what the test's function decides and records every review.
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { TestCa, type PemFiles } from './testpki.js';

export type Answer = (review: any) => { status?: number; body?: unknown } | 'hang';

export class TokenWebhook {
  readonly reviews: any[] = [];
  port = 0;
  private server?: https.Server;
  private readonly hanging = new Set<import('node:http').ServerResponse>();

  private constructor(readonly dir: string, readonly ca: TestCa, readonly serving: PemFiles, readonly clientCa: TestCa, readonly client: PemFiles,
    public answer: Answer) {}

  /** Makes the certificates (the webhook's CA and serving pair; the CA and pair the server calls with). */
  static async create(dir: string, answer: Answer): Promise<TokenWebhook> {
    const ca = await TestCa.create(dir, 'webhook-ca');
    const clientCa = await TestCa.create(dir, 'webhook-client-ca');
    return new TokenWebhook(dir, ca, await ca.server('webhook'), clientCa, await clientCa.client('svc-apiserver'), answer);
  }

  /** Listens on a free loopback port, or on the port it had before. */
  async start(): Promise<void> {
    this.server = https.createServer({
      cert: this.serving.certPem, key: this.serving.keyPem, ca: this.clientCa.files.certPem, requestCert: true, rejectUnauthorized: true,
    }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        this.reviews.push(review);
        const answer = this.answer(review);
        if (answer === 'hang') { this.hanging.add(res); return; }
        res.writeHead(answer.status ?? 201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Writes the server's webhook configuration (files named by path, or embedded as -data) and returns its path. */
  writeKubeconfig(name = 'webhook.kubeconfig', embedded = false): string {
    const file = (field: string, path: string, pem: string) => (embedded ? { [`${field}-data`]: Buffer.from(pem).toString('base64') } : { [field]: path });
    const config = {
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'tokens', cluster: { server: `https://127.0.0.1:${this.port}/review`, ...file('certificate-authority', this.ca.files.cert, this.ca.files.certPem) } }],
      users: [{ name: 'apiserver', user: { ...file('client-certificate', this.client.cert, this.client.certPem), ...file('client-key', this.client.key, this.client.keyPem) } }],
      contexts: [{ name: 'webhook', context: { cluster: 'tokens', user: 'apiserver' } }],
      'current-context': 'webhook',
    };
    const path = join(this.dir, name);
    writeFileSync(path, YAML.stringify(config));
    return path;
  }

  /** Reviews that carried a given token. */
  count(token: string): number {
    return this.reviews.filter((r) => r.spec?.token === token).length;
  }
}
