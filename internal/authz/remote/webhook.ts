// The webhook call: a SubjectAccessReview POSTed over HTTPS in the configured
// version; `status.allowed` allows, `status.denied` denies, neither has no
// opinion. A non-2xx answer or one that is not a review is a failure.
import https from 'node:https';
import { verdict, type Verdict } from '../types.js';
import { TimeoutError, type RemoteCall } from './guarded.js';
import type { WebhookTarget } from './kubeconfig.js';
import { subjectAccessReview, type SarVersion } from './sar.js';

const MAX_ANSWER_BYTES = 3 * 1024 * 1024;

export function webhookCall(target: WebhookTarget, version: SarVersion): { call: RemoteCall; close(): void } {
  const agent = new https.Agent({
    keepAlive: true, ca: target.ca, cert: target.cert, key: target.key,
    rejectUnauthorized: !target.insecureSkipTLSVerify, servername: target.serverName,
  });
  const call: RemoteCall = async (attributes, timeoutMs) => {
    const answer = await post(target, agent, JSON.stringify(subjectAccessReview(attributes, version)), timeoutMs);
    return decide(answer);
  };
  return { call, close: () => agent.destroy() };
}

function decide(answer: unknown): Verdict {
  const review = answer as { kind?: unknown; status?: { allowed?: unknown; denied?: unknown; reason?: unknown; evaluationError?: unknown } };
  if (!review || typeof review !== 'object' || review.kind !== 'SubjectAccessReview' || typeof review.status !== 'object' || !review.status) {
    throw new Error('the webhook did not answer with a SubjectAccessReview');
  }
  const { allowed, denied, reason, evaluationError } = review.status;
  const why = typeof reason === 'string' ? reason : '';
  const error = typeof evaluationError === 'string' && evaluationError ? evaluationError : undefined;
  if (allowed === true) return verdict('ALLOW', why, error);
  return verdict(denied === true ? 'DENY' : 'NO_OPINION', why, error);
}

function post(target: WebhookTarget, agent: https.Agent, body: string, timeoutMs: number): Promise<unknown> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
  if (target.token) headers.Authorization = `Bearer ${target.token}`;
  return new Promise((resolve, reject) => {
    const req = https.request(target.url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new Error('the webhook answer is too large'));
        else chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) return reject(new Error(`the webhook answered HTTP ${status}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new Error('the webhook answer is not JSON'));
        }
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new TimeoutError(`the webhook did not answer within ${timeoutMs}ms`)), timeoutMs);
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    req.end(body);
  });
}
