// Leader election on a Lease (coordination.svc.io/v1), as the platform's
// components run it: a candidate takes the Lease when it is free or its holder has
// not renewed it for its duration (measured on the candidate's own clock from when
// it last saw the record change, so clocks need not agree), the leader renews it
// every retry period, and a leader that cannot renew within the renew deadline has
// lost it. Writes carry the resourceVersion read, so two candidates never both win.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { group } from '../names/index.js';
import { microTime } from './events.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock?: () => number;
  /** Told when another candidate holds the Lease (each new holder once). */
  onHeldBy?: (holder: string) => void;
}

/** Upstream waits a retry period plus up to this fraction more between attempts, so candidates do not move in step. */
const JITTER = 1.2;

export class LeaderElector {
  private observed?: { spec: string; at: number; durationMs: number; holder: string };
  private lastRenew = 0;
  private leading = false;
  private current?: ApiObject;
  private stopped = false;
  private readonly clock: () => number;
  private readonly path: string;

  constructor(private readonly client: ApiClient, private readonly opts: LeaderElectionOptions) {
    this.clock = opts.clock ?? Date.now;
    this.path = `/apis/${group('coordination')}/v1/namespaces/${opts.namespace}/leases`;
  }

  /** The Lease as last read or written. */
  get lease(): ApiObject | undefined {
    return this.current;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Resolves once this candidate holds the Lease (retrying every retry period until it does, or is stopped). */
  async acquire(): Promise<boolean> {
    while (!this.stopped) {
      if (await this.tryAcquireOrRenew().catch(() => false)) {
        this.leading = true;
        this.lastRenew = this.clock();
        return true;
      }
      await sleep(this.opts.retryPeriodMs * (1 + Math.random() * (JITTER - 1)));
    }
    return false;
  }

  /** Renews every retry period; calls `lost` once when no renewal succeeded within the renew deadline. */
  keep(lost: () => void): void {
    let gone = false;
    const loseOnce = () => { if (!gone && !this.stopped) { gone = true; this.leading = false; lost(); } };
    // A renewal that hangs must not hold the deadline off: the deadline is watched on its own.
    const watchdog = setInterval(() => { if (this.clock() - this.lastRenew > this.opts.renewDeadlineMs) loseOnce(); }, Math.min(this.opts.retryPeriodMs, 1000));
    void (async () => {
      while (!this.stopped && !gone) {
        await sleep(this.opts.retryPeriodMs);
        if (this.stopped || gone) break;
        if (await this.tryAcquireOrRenew().catch(() => false)) this.lastRenew = this.clock();
        else if (this.observed && this.observed.holder !== this.opts.identity && this.observed.holder !== '') loseOnce();
      }
      clearInterval(watchdog);
    })();
  }

  /** Stops renewing; a leader gives the Lease up (no holder, a one-second duration) so a successor need not wait it out. */
  async release(): Promise<boolean> {
    this.stopped = true;
    if (!this.leading) return false;
    this.leading = false;
    const res = await this.client.get(`${this.path}/${this.opts.name}`).catch(() => undefined);
    const lease = res?.status === 200 ? res.body : undefined;
    if (!lease || specOf(lease).holderIdentity !== this.opts.identity) return false;
    const now = microTime(this.clock());
    const spec: LeaseSpec = { leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: specOf(lease).leaseTransitions ?? 0 };
    const put = await this.client.request('PUT', `${this.path}/${this.opts.name}`, { ...lease, spec }).catch(() => undefined);
    return put?.status === 200;
  }

  /** One attempt: creates the Lease, renews it, or takes it over when its holder let it expire. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.clock();
    const stamp = microTime(now);
    const mine = (old: LeaseSpec | undefined): LeaseSpec => {
      const renewing = old?.holderIdentity === this.opts.identity;
      return {
        holderIdentity: this.opts.identity, leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
        acquireTime: renewing ? old!.acquireTime : stamp, renewTime: stamp,
        leaseTransitions: renewing ? old!.leaseTransitions ?? 0 : (old ? (old.leaseTransitions ?? 0) + 1 : 0),
      };
    };
    const res = await this.client.get(`${this.path}/${this.opts.name}`);
    if (res.status === 404) {
      const spec = mine(undefined);
      const created = await this.client.request('POST', this.path, { apiVersion: `${group('coordination')}/v1`, kind: 'Lease', metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec });
      if (created.status !== 201) return false;
      this.current = created.body;
      this.observe(spec, now);
      return true;
    }
    if (res.status !== 200) return false;
    this.current = res.body;
    const old = specOf(res.body);
    this.observe(old, now);
    if (old.holderIdentity && old.holderIdentity !== this.opts.identity && this.observed!.at + this.observed!.durationMs > now) {
      return false;
    }
    const spec = mine(old);
    const put = await this.client.request('PUT', `${this.path}/${this.opts.name}`, { ...res.body, spec });
    if (put.status !== 200) return false;
    this.current = put.body;
    this.observe(spec, now);
    return true;
  }

  /** Notes when the record was last seen to change: its holder's time runs from then on this clock. */
  private observe(spec: LeaseSpec, now: number): void {
    const text = JSON.stringify(spec);
    if (this.observed?.spec === text) return;
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.opts.identity && holder !== this.observed?.holder) this.opts.onHeldBy?.(holder);
    this.observed = { spec: text, at: now, durationMs: (spec.leaseDurationSeconds ?? 0) * 1000, holder };
  }
}

const specOf = (lease: ApiObject): LeaseSpec => (lease.spec ?? {}) as LeaseSpec;
