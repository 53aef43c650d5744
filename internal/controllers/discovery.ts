// The resources the API serves, as controllers need them: asked once the gateway
// answers, and again at most every refresh interval.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient, Resource } from '../client/index.js';

const REFRESH_MS = 30_000;
const RETRY_MS = 500;

/** A function answering the served resources, retrying until the gateway answers; asked again once `refreshMs`
 * passed (0: every time, for work that must see kinds defined a moment ago). */
export function discovered(client: ApiClient, refreshMs = REFRESH_MS): () => Promise<Resource[]> {
  let cached: { at: number; resources: Resource[] } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < refreshMs) return cached.resources;
    for (;;) {
      try {
        cached = { at: Date.now(), resources: await client.resources() };
        return cached.resources;
      } catch {
        await sleep(RETRY_MS);
      }
    }
  };
}
