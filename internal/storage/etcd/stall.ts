// When a write etcd may never answer is given up. One a follower forwarded to a
// leader that died is dropped, and etcd says so only after its own request
// timeout (5 s and more), while a new leader is elected in about a second. So a
// write is given up LEADER_CHANGE_GRACE_MS after an answer names a newer leader's
// term than it was sent under (what the old leader had committed, the new one
// applies at once), or once etcd answered nothing for its stall limit and a small
// linearizable read (which needs a leader) is not answered either. An etcd that
// answers under the same leader is only busy: the write waits for its deadline.

/** The stall limit of a write. */
export const WRITE_STALL_MS = 2000;
const LEADER_CHANGE_GRACE_MS = 500;

export class StallWatch {
  /** When etcd last answered a call (performance.now()), and the newest leader term an answer named. */
  private answeredAt = 0;
  private term = 0;
  /** The writes watched, told when an answer names a newer term. */
  private readonly watched = new Set<() => void>();
  private probing?: Promise<boolean>;

  /** probeRead: a read that needs a leader, within a short deadline. */
  constructor(private readonly probeRead: () => Promise<unknown>) {}

  /** etcd answered a call, under this leader term (0: not said). */
  answered(term: number): void {
    this.answeredAt = performance.now();
    if (term <= this.term) return;
    const known = this.term > 0;
    this.term = term;
    if (known) for (const told of [...this.watched]) told();
  }

  /** Watches a write sent now: calls giveUp when it is to be given up; returns what ends the watch. */
  watch(stallMs: number, giveUp: (why: string) => void): () => void {
    const sent = performance.now();
    let quiet: NodeJS.Timeout | undefined;
    let leaderChange: NodeJS.Timeout | undefined;
    let over = false;
    const check = (): void => {
      const silent = performance.now() - Math.max(sent, this.answeredAt);
      if (silent < stallMs) quiet = setTimeout(check, stallMs - silent);
      else void this.probe().then((answers) => { if (!over) (answers ? check() : giveUp(`etcd answered nothing for ${stallMs} ms`)); });
    };
    quiet = setTimeout(check, stallMs);
    const newLeader = (): void => {
      leaderChange ??= setTimeout(() => giveUp(`etcd changed leader (term ${this.term}) while it was under way`), Math.min(stallMs, LEADER_CHANGE_GRACE_MS));
    };
    this.watched.add(newLeader);
    return () => {
      over = true;
      clearTimeout(quiet);
      clearTimeout(leaderChange);
      this.watched.delete(newLeader);
    };
  }

  /** Whether etcd answers the probe read: one at a time for every watched write. */
  private probe(): Promise<boolean> {
    this.probing ??= this.probeRead().then(() => true, () => false).finally(() => { this.probing = undefined; });
    return this.probing;
  }
}
