// Reading samples of the gateway's /metrics (which carries authn's and authz's too).
import type { Cluster } from './cluster.js';

/** The sum of a metric's samples whose labels include every one given (0 when there are none). */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (!Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) continue;
    sum += Number(m[3]);
  }
  return sum;
}

/** The gateway's authentication cache hits, the Authenticate calls authn answered and the decisions authz made, so far. */
export async function authCounts(c: Cluster): Promise<{ hits: number; authn: number; authz: number }> {
  const text = (await c.request('GET', '/metrics')).text;
  return {
    hits: sampleSum(text, 'authentication_token_cache_request_total', { status: 'hit' }),
    authn: sampleSum(text, 'svc_authn_authenticate_requests_total'),
    authz: sampleSum(text, 'apiserver_authorization_decisions_total'),
  };
}
