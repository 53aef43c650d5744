// The counters of a Job's status as the controller writes them: a finished pod's
// UID waits in uncountedTerminatedPods until its finalizer is gone, then counts.
import type { Job } from './types.js';

/** Moves uncounted UIDs of pods that no longer hold the finalizer into the counters; answers whether anything moved. */
export function countReleased(job: Job, withFinalizer: Set<string>): boolean {
  const st = job.status!;
  const unc = st.uncountedTerminatedPods ??= {};
  let changed = false;
  for (const list of ['succeeded', 'failed'] as const) {
    const before = unc[list] ?? [];
    const kept = before.filter((uid) => withFinalizer.has(uid));
    if (kept.length === before.length) continue;
    st[list] = (st[list] ?? 0) + before.length - kept.length;
    unc[list] = kept;
    changed = true;
  }
  return changed;
}

/** The status as the platform writes it: zero counters and empty uncounted lists left out. */
export function asWritten(job: Job): Job {
  const st = job.status ?? {};
  for (const counter of ['active', 'succeeded', 'failed'] as const) if (st[counter] === 0) delete st[counter];
  const unc = st.uncountedTerminatedPods;
  if (unc?.succeeded?.length === 0) delete unc.succeeded;
  if (unc?.failed?.length === 0) delete unc.failed;
  return job;
}
