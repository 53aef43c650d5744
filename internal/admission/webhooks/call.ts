// Calling one webhook: where it is (its URL, or its service resolved to a ready
// endpoint, the certificate then naming `<service>.<namespace>.svc`), one POST
// of the review within the webhook's timeout, and the answer checked.
import { WebhookCallError, WebhookClient, type RetryPolicy } from '../../webhook/client.js';
import type { WebhookEndpoint } from '../../webhook/kubeconfig.js';
import type { JsonObject } from '../types.js';
import type { Hook } from './hooks.js';
import { InvalidAnswer, readAnswer, review, type ReviewAnswer } from './review.js';
import type { ServiceEndpoints } from './services.js';

/** A webhook that could not be called or answered nonsense; `code` is the HTTP status for the metrics. */
export class CallFailure extends Error {
  constructor(hook: Hook, reason: string, readonly code: number) {
    super(`failed calling webhook "${hook.name}": ${reason}`);
  }
}

const UNAVAILABLE = 503;

async function endpointOf(hook: Hook, services: ServiceEndpoints): Promise<WebhookEndpoint> {
  const { url, service, ca } = hook.client;
  const timeout = `${hook.timeoutMs / 1000}s`;
  if (!service) {
    const target = new URL(url ?? '');
    target.searchParams.set('timeout', timeout);
    return { url: target, ca, insecureSkipTlsVerify: false };
  }
  const { host, port } = await services.resolve(service);
  const target = new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}${service.path}`);
  target.searchParams.set('timeout', timeout);
  return { url: target, ca, serverName: `${service.name}.${service.namespace}.svc`, insecureSkipTlsVerify: false };
}

function clientFor(hook: Hook, endpoint: WebhookEndpoint): WebhookClient {
  const key = `${endpoint.url.href} ${endpoint.serverName ?? ''}`;
  let client = hook.clients.get(key);
  if (!client) {
    const once: RetryPolicy = { deadlineMs: hook.timeoutMs, attempts: 1, initialBackoffMs: 0 };
    client = new WebhookClient(endpoint, once);
    hook.clients.set(key, client);
  }
  return client;
}

/** Sends the review request and answers the checked response; a failure throws CallFailure. */
export async function callWebhook(hook: Hook, version: string, request: JsonObject, services: ServiceEndpoints): Promise<ReviewAnswer> {
  let endpoint: WebhookEndpoint;
  try {
    endpoint = await endpointOf(hook, services);
  } catch (err) {
    throw new CallFailure(hook, `failed to call webhook: ${(err as Error).message}`, UNAVAILABLE);
  }
  let body: unknown;
  try {
    body = await clientFor(hook, endpoint).post(review(version, request));
  } catch (err) {
    const failure = err as WebhookCallError;
    throw new CallFailure(hook, `failed to call webhook: Post "${endpoint.url.href}": ${failure.message}`, failure.status ?? UNAVAILABLE);
  }
  try {
    return readAnswer(body, version, request.uid as string, hook.mutating);
  } catch (err) {
    if (!(err instanceof InvalidAnswer)) throw err;
    throw new CallFailure(hook, `received invalid webhook response: ${err.message}`, UNAVAILABLE);
  }
}
