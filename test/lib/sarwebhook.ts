// A real HTTPS SubjectAccessReview webhook for tests, on 127.0.0.1 with a
// certificate of its own CA: it records every review and answers by user name
// (`allowed-*` allowed, `denied-*` denied, `broken` HTTP 500, others no opinion);
// `slow-*` users are allowed after `slowMs`, to hold requests in flight.
import { createServer, type Server } from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

export interface SarWebhook {
  reviews: any[];
  kubeconfig: string;
  caPem: string;
  /** Reviews received for a user. */
  count(user: string): number;
  stop(): Promise<void>;
}

function answer(review: any): { code: number; body: unknown } {
  const user: string = review?.spec?.user ?? '';
  if (user === 'broken') return { code: 500, body: { message: 'broken' } };
  const status = user.startsWith('allowed-') || user.startsWith('slow-') ? { allowed: true, reason: 'the webhook allows' }
    : user.startsWith('denied-') ? { allowed: false, denied: true, reason: 'the webhook denies' } : { allowed: false };
  return { code: 200, body: { apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status } };
}

/** Starts the webhook and writes a client configuration for it into dir. */
export async function startSarWebhook(dir: string, opts: { slowMs?: number } = {}): Promise<SarWebhook> {
  const caPem = await createCa('sar-webhook-ca', 1);
  const ca = await loadCa(caPem.certPem, caPem.keyPem);
  const leaf = await issueLeaf(ca, { commonName: 'sar-webhook', hosts: ['127.0.0.1'], usage: 'server', validityDays: 1 });
  const reviews: any[] = [];
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let review: any;
      try { review = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { review = undefined; }
      reviews.push(review);
      const { code, body } = answer(review);
      const delay = String(review?.spec?.user ?? '').startsWith('slow-') ? opts.slowMs ?? 0 : 0;
      const timer = setTimeout(() => res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)), delay);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const caFile = join(dir, 'sar-webhook-ca.pem');
  writeFileSync(caFile, caPem.certPem);
  const kubeconfig = join(dir, 'sar-webhook.kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'authz', cluster: { server: `https://127.0.0.1:${port}/authorize`, 'certificate-authority': 'sar-webhook-ca.pem' } }],
    users: [{ name: 'apiserver', user: {} }],
    contexts: [{ name: 'authz', context: { cluster: 'authz', user: 'apiserver' } }],
    'current-context': 'authz',
  }));
  return {
    reviews, kubeconfig, caPem: caPem.certPem,
    count: (user) => reviews.filter((r) => r?.spec?.user === user).length,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
