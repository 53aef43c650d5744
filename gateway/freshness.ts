// Reads that must be at least as new as a resourceVersion wait briefly for it.
import { tooLargeResourceVersion } from '../internal/apimachinery/status.js';
import type { StorageClient } from '../internal/storage/client.js';
import { storageError } from './backends.js';

const WAIT_MS = 3000;
const POLL_MS = 100;

/** Resolves once storage has reached revision; 504 Too large resource version after a short wait. */
export async function waitForRevision(storage: StorageClient, revision: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const current = await storage.currentRevision().catch((err) => { throw storageError(err, { group: '', resource: '' }, ''); });
    if (current.revision >= revision) return;
    if (Date.now() >= deadline) throw tooLargeResourceVersion(revision, current.revision);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
