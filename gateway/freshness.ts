// Reads that must be at least as new as a resourceVersion wait briefly for it: on the
// revisions the change stream brings (the watch hub follows every commit), not by
// asking storage over and over.
import { setTimeout as sleep } from 'node:timers/promises';
import { tooLargeResourceVersion } from '../internal/apimachinery/status.js';
import type { StorageClient } from '../internal/storage/client.js';
import { storageError } from './backends.js';
import type { RevisionFeed } from './hub.js';

const WAIT_MS = 3000;
/** How often storage itself is asked while waiting: the change stream may be down, or there may be none. */
const RECHECK_MS = 1000;

/** Resolves once storage has reached revision; 504 Too large resource version after a short wait. */
export async function waitForRevision(backends: { storage: StorageClient; revisions?: RevisionFeed }, revision: number): Promise<void> {
  const { storage, revisions } = backends;
  if (revisions && revisions.currentRevision >= revision) return;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const current = await storage.currentRevision().catch((err) => { throw storageError(err, { group: '', resource: '' }, ''); });
    if (current.revision >= revision) return;
    const left = deadline - Date.now();
    if (left <= 0) throw tooLargeResourceVersion(revision, current.revision);
    const step = Math.min(left, RECHECK_MS);
    if (await (revisions ? revisions.reached(revision, step) : sleep(step, false))) return;
  }
}
