// Whether the API serves a resource: a controller of a kind turned off by
// --runtime-config stays idle, as upstream's do, instead of waiting for a list
// that never comes.
import type { ApiClient } from '../client/index.js';

const RETRY_MS = 500;

/** Asks the group version's discovery (`/apis/batch/v1`) until it answers; false when the resource is not in it.
 * `stopped` ends the asking. */
export async function resourceServed(client: ApiClient, groupVersionPath: string, resource: string, stopped: () => boolean): Promise<boolean> {
  for (;;) {
    const res = await client.request('GET', groupVersionPath).catch(() => ({ status: 0, body: undefined }));
    if (res.status === 200) return ((res.body as { resources?: Array<{ name?: string }> } | undefined)?.resources ?? []).some((r) => r.name === resource);
    if (res.status === 404 || stopped()) return false;
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}
