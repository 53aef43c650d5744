// Overload protection as upstream's max-in-flight filter: at most so many read-only
// and so many mutating requests are served at once; one more is answered 429 with
// Retry-After. Long-running requests (watches, streams) hold no slot.
import type { Counter, Gauge } from 'prom-client';
import { tooManyRequests } from '../internal/apimachinery/status.js';
import { GROUP_MASTERS } from '../internal/names/index.js';
import type { RequestInfo } from './requestinfo.js';
import type { UserInfo } from './backends.js';

export type RequestKind = 'readOnly' | 'mutating';

/** The most requests of each kind served at once; 0 is no limit. */
export type InflightLimits = Record<RequestKind, number>;

const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
/** Upstream's read-only verbs; any other verb (a non-resource POST, even HEAD) counts as mutating. */
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);
/** How often the in-flight gauge publishes the highest count of the last period. */
const WATERMARK_PERIOD_MS = 1000;

/** Requests that may last as long as the client wants: they get neither a slot nor the request timeout. */
export function isLongRunning(info: RequestInfo): boolean {
  return LONG_RUNNING_VERBS.has(info.verb) || (info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

export const requestKindOf = (info: RequestInfo): RequestKind => (READ_ONLY_VERBS.has(info.verb) ? 'readOnly' : 'mutating');

/** system:masters (the super-user and loopback clients) always get an answer, as upstream. */
const isPrivileged = (user: UserInfo | undefined): boolean => Boolean(user?.groups?.includes(GROUP_MASTERS));

export interface InflightMetrics {
  /** apiserver_current_inflight_requests: the highest count of each kind in the last second. */
  inflight: Gauge<'request_kind'>;
  /** apiserver_dropped_requests_total: requests answered 429 by kind. */
  dropped: Counter<'request_kind'>;
}

export class InflightLimiter {
  private readonly current: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private readonly watermark: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  /** Publishes the watermarks while requests come and go; an idle server keeps no timer. */
  private ticking?: NodeJS.Timeout;
  private tracked = false;

  constructor(private readonly limits: InflightLimits, private readonly metrics: InflightMetrics,
    private readonly periodMs = WATERMARK_PERIOD_MS) {
    this.publish();
  }

  /** Takes a slot for a request (after authentication, before authorization, as upstream): its kind, to give
   * back with `leave`, or undefined for a long-running request, which needs none. 429 when none is free, marking
   * the request's `state` as terminated. */
  enter(info: RequestInfo, user: UserInfo | undefined, state: { terminated?: boolean }): RequestKind | undefined {
    if (isLongRunning(info)) return undefined;
    const kind = requestKindOf(info);
    const limit = this.limits[kind];
    if (limit > 0 && this.current[kind] >= limit && !isPrivileged(user)) {
      this.metrics.dropped.inc({ request_kind: kind });
      state.terminated = true;
      throw tooManyRequests();
    }
    this.track(kind, 1);
    return kind;
  }

  leave(kind: RequestKind): void {
    this.track(kind, -1);
  }

  private track(kind: RequestKind, delta: number): void {
    this.current[kind] += delta;
    this.watermark[kind] = Math.max(this.watermark[kind], this.current[kind]);
    this.tracked = true;
    this.ticking ??= setInterval(() => this.tick(), this.periodMs).unref();
  }

  /** Publishes; stops once a whole period passed with no request and none in flight, as all is published then. */
  private tick(): void {
    this.publish();
    if (this.tracked || this.current.readOnly > 0 || this.current.mutating > 0) {
      this.tracked = false;
      return;
    }
    clearInterval(this.ticking);
    this.ticking = undefined;
  }

  private publish(): void {
    for (const kind of ['readOnly', 'mutating'] as const) {
      this.metrics.inflight.set({ request_kind: kind }, this.watermark[kind]);
      this.watermark[kind] = this.current[kind];
    }
  }
}
