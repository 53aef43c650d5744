// Calling a webhook: one JSON POST over HTTPS, retried with a growing pause
// after a failure that may pass (no connection, a reset, 429 or a 5xx answer),
// all within one deadline, so a slow or absent service costs a bounded time.
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookEndpoint } from './kubeconfig.js';

export interface RetryPolicy {
  /** The whole call, retries included, ends by then. */
  deadlineMs: number;
  attempts: number;
  /** The first pause; each next one doubles. */
  initialBackoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { deadlineMs: 6_000, attempts: 4, initialBackoffMs: 200 };
/** Longest answer read from a webhook. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export class WebhookCallError extends Error {
  /** status: the HTTP status the webhook answered, when it answered one. */
  constructor(message: string, readonly retriable: boolean, readonly status?: number) {
    super(message);
  }
}

interface Answer {
  status: number;
  body: unknown;
}

function postOnce(agent: https.Agent, endpoint: WebhookEndpoint, payload: string, timeoutMs: number): Promise<Answer> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': String(Buffer.byteLength(payload)),
    ...(endpoint.token ? { Authorization: `Bearer ${endpoint.token}` } : {}),
  };
  return new Promise((done, fail) => {
    const req = https.request(endpoint.url, { method: 'POST', agent, headers, timeout: timeoutMs, servername: endpoint.serverName }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new WebhookCallError('the webhook answer is too large', false));
        else chunks.push(c);
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status === 429 || status >= 500) return fail(new WebhookCallError(`the webhook answered ${status}`, true, status));
        if (status < 200 || status > 299) return fail(new WebhookCallError(`the webhook answered ${status}`, false, status));
        try {
          done({ status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch {
          fail(new WebhookCallError('the webhook answer is not JSON', false));
        }
      });
      res.on('error', (err) => fail(new WebhookCallError(err.message, true)));
    });
    req.on('timeout', () => req.destroy(new WebhookCallError(`no answer from the webhook within ${timeoutMs}ms`, true)));
    req.on('error', (err) => fail(err instanceof WebhookCallError ? err : new WebhookCallError(err.message, true)));
    req.end(payload);
  });
}

/** A webhook endpoint with its TLS settings, posting JSON. */
export class WebhookClient {
  private readonly agent: https.Agent;

  constructor(private readonly endpoint: WebhookEndpoint, private readonly retry: RetryPolicy = DEFAULT_RETRY) {
    this.agent = new https.Agent({
      keepAlive: true, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: !endpoint.insecureSkipTlsVerify,
    });
  }

  /** POSTs body; the parsed JSON answer, or a WebhookCallError once the retries or the deadline are spent. */
  async post(body: unknown): Promise<unknown> {
    const payload = JSON.stringify(body);
    const deadline = Date.now() + this.retry.deadlineMs;
    let pause = this.retry.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await postOnce(this.agent, this.endpoint, payload, Math.max(1, deadline - Date.now()))).body;
      } catch (err) {
        const failure = err as WebhookCallError;
        if (!failure.retriable || attempt >= this.retry.attempts || Date.now() + pause >= deadline) throw failure;
      }
      await sleep(pause);
      pause *= 2;
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
