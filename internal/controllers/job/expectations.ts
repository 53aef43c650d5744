// What the Job controller wrote and has not seen in its informers yet: a job is
// not managed again until its pod creations and deletions are observed (or five
// minutes pass), and a pod whose finalizer removal is in flight is not counted.
import type { Expectations } from './sync.js';

/** As upstream: an expectation never observed stops holding the job back after five minutes. */
const TTL_MS = 5 * 60_000;

interface Counts { adds: number; dels: number; at: number }

export class PodExpectations implements Expectations {
  private readonly counts = new Map<string, Counts>();
  private readonly finalizers = new Map<string, Set<string>>();

  constructor(private readonly clock: () => number = Date.now) {}

  satisfied(key: string): boolean {
    const c = this.counts.get(key);
    return !c || (c.adds <= 0 && c.dels <= 0) || this.clock() - c.at > TTL_MS;
  }

  expectCreations(key: string, n: number): void {
    this.counts.set(key, { adds: n, dels: 0, at: this.clock() });
  }

  expectDeletions(key: string, n: number): void {
    this.counts.set(key, { adds: 0, dels: n, at: this.clock() });
  }

  creationObserved(key: string): void {
    const c = this.counts.get(key);
    if (c) c.adds--;
  }

  deletionObserved(key: string): void {
    const c = this.counts.get(key);
    if (c) c.dels--;
  }

  pendingFinalizerRemovals(key: string): Set<string> {
    return new Set(this.finalizers.get(key));
  }

  expectFinalizerRemovals(key: string, uids: string[]): void {
    const set = this.finalizers.get(key) ?? new Set();
    for (const uid of uids) set.add(uid);
    this.finalizers.set(key, set);
  }

  finalizerRemovalObserved(key: string, uid: string): void {
    const set = this.finalizers.get(key);
    if (!set?.delete(uid) || set.size > 0) return;
    this.finalizers.delete(key);
  }

  forget(key: string): void {
    this.counts.delete(key);
    this.finalizers.delete(key);
  }
}
