// What webhook and gRPC authorizers share: match conditions decide whether the
// remote end is asked at all, answers are kept for their TTLs (allowed ones for
// authorizedTTL, others for unauthorizedTTL), and a failed call is no opinion
// or a denial by the failure policy.
import type { Program } from '../../cel/index.js';
import type { AuthzMetrics } from '../metrics.js';
import { verdict, type Attributes, type Authorizer, type Verdict } from '../types.js';
import { sarSpec } from './sar.js';

export type FailurePolicy = 'NoOpinion' | 'Deny';

export interface RemoteOptions {
  type: string;
  name: string;
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  timeoutMs: number;
  failurePolicy: FailurePolicy;
  matchConditions: Program[];
}

/** One round trip to the remote end; rejects when the call fails or the answer is malformed. */
export type RemoteCall = (attributes: Attributes, timeoutMs: number) => Promise<Verdict>;

/** A call that ran out of time. */
export class TimeoutError extends Error {}

const CACHE_LIMIT = 8192;

export class GuardedAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { answer: Verdict; expires: number }>();

  constructor(readonly options: RemoteOptions, private readonly call: RemoteCall, private readonly metrics: AuthzMetrics,
    private readonly onClose?: () => void) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    const spec = sarSpec(attributes);
    const skip = this.matchConditionsSkip(spec);
    if (skip) return skip;
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    const now = Date.now();
    if (hit && hit.expires > now) return { ...hit.answer, validity: { ttlMs: hit.expires - now } };
    if (hit) this.cache.delete(key);
    return this.ask(attributes, key);
  }

  close(): void {
    this.onClose?.();
  }

  private async ask(attributes: Attributes, key: string): Promise<Verdict> {
    const { name, timeoutMs } = this.options;
    const started = process.hrtime.bigint();
    let answer: Verdict;
    try {
      answer = await this.call(attributes, timeoutMs);
    } catch (err) {
      const result = err instanceof TimeoutError ? 'timeout' : 'error';
      this.observe(result, started);
      return this.failed(`${name}: ${(err as Error).message}`, result);
    }
    this.observe('success', started);
    const ttl = answer.decision === 'ALLOW' ? this.options.authorizedTTLMs : this.options.unauthorizedTTLMs;
    if (ttl > 0) this.remember(key, answer, ttl);
    return { ...answer, validity: ttl > 0 ? { ttlMs: ttl } : 'uncacheable' };
  }

  private remember(key: string, answer: Verdict, ttl: number): void {
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { answer, expires: Date.now() + ttl });
  }

  private observe(result: string, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.metrics.webhookDuration.observe({ name: this.options.name, result }, seconds);
    this.metrics.webhookEvaluations.inc({ name: this.options.name, result });
  }

  private failed(error: string, result: string): Verdict {
    if (this.options.failurePolicy === 'Deny') return verdict('DENY', error, error, 'uncacheable');
    this.metrics.webhookFailOpen.inc({ name: this.options.name, result });
    return verdict('NO_OPINION', '', error, 'uncacheable');
  }

  /** A verdict when the match conditions keep the request from the remote end; undefined to ask it. */
  private matchConditionsSkip(spec: ReturnType<typeof sarSpec>): Verdict | undefined {
    const { type, name, matchConditions, failurePolicy } = this.options;
    const errors: string[] = [];
    for (const program of matchConditions) {
      let value: unknown;
      try {
        value = program.evaluate({ request: spec }).value;
      } catch (err) {
        errors.push(`${program.expression}: ${(err as Error).message}`);
        continue;
      }
      if (value === false) {
        this.metrics.matchConditionExclusions.inc({ type, name });
        return verdict('NO_OPINION', '', undefined, 'policy');
      }
      if (value !== true) errors.push(`${program.expression}: the result is not a boolean`);
    }
    if (!errors.length) return undefined;
    this.metrics.matchConditionErrors.inc({ type, name });
    const error = `${name}: match condition error: ${errors.join('; ')}`;
    return failurePolicy === 'Deny' ? verdict('DENY', error, error, 'uncacheable') : verdict('NO_OPINION', '', error, 'uncacheable');
  }
}
