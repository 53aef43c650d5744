// The sampler named by OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, read as the
// OpenTelemetry SDK reads them, and what it decides before any span is built.
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace';

type SdkSamplers = Pick<typeof import('@opentelemetry/sdk-trace'),
  'AlwaysOffSampler' | 'AlwaysOnSampler' | 'ParentBasedSampler' | 'TraceIdRatioBasedSampler'>;

export interface Sampling {
  /** The name in effect (the default when the variable is unset or unknown). */
  name: string;
  /** The sampler of root spans (and, unless parent-based, of every span). */
  root: 'always_on' | 'always_off' | 'traceidratio';
  /** traceidratio's ratio, 0 to 1. */
  ratio: number;
  /** A child follows its parent's sampled flag (the SDK's default sub-samplers). */
  parentBased: boolean;
  /** A root span is never sampled. */
  rootOff: boolean;
}

const DEFAULT_SAMPLER = 'parentbased_always_on';
const ROOTS = new Set<Sampling['root']>(['always_on', 'always_off', 'traceidratio']);

/** OTEL_TRACES_SAMPLER_ARG as a ratio: 1 when unset, and (with a warning) when not a number in [0, 1]. */
function ratioOf(arg: string | undefined, warn: (message: string) => void): number {
  if (arg === undefined || arg.trim() === '') return 1;
  const ratio = Number(arg);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  warn(`OTEL_TRACES_SAMPLER_ARG=${arg} is not a number between 0 and 1; using 1`);
  return 1;
}

/** The sampling the environment asks for; an unknown sampler name falls back (with a warning) to parentbased_always_on. */
export function samplingFromEnv(env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (m) => process.stderr.write(`tracing: ${m}\n`)): Sampling {
  const asked = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || DEFAULT_SAMPLER;
  const parentBased = asked.startsWith('parentbased_');
  const root = (parentBased ? asked.slice('parentbased_'.length) : asked) as Sampling['root'];
  if (!ROOTS.has(root)) {
    warn(`OTEL_TRACES_SAMPLER=${asked} is not supported; using ${DEFAULT_SAMPLER}`);
    return samplingFromEnv({ ...env, OTEL_TRACES_SAMPLER: DEFAULT_SAMPLER }, warn);
  }
  const ratio = root === 'traceidratio' ? ratioOf(env.OTEL_TRACES_SAMPLER_ARG, warn) : 1;
  return { name: asked, root, ratio, parentBased, rootOff: root === 'always_off' || ratio === 0 };
}

/** The SDK sampler that decides for the spans that are started. */
export function sdkSampler(sampling: Sampling, sdk: SdkSamplers): Sampler {
  const root = sampling.root === 'always_on' ? new sdk.AlwaysOnSampler()
    : sampling.root === 'always_off' ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(sampling.ratio);
  return sampling.parentBased ? new sdk.ParentBasedSampler({ root }) : root;
}

/**
 * Whether a span under this parent may be sampled, so must be handed to the SDK. False is
 * certain, and the work then runs under the parent itself, propagating it unchanged (as a
 * non-recording span would). True leaves the decision to the sampler: a trace id ratio, or a
 * sampled parent whose flag a never-sampling sampler clears for the hops after it.
 */
export function maySample(sampling: Sampling, parent: SpanContext | undefined): boolean {
  const sampled = parent !== undefined && (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
  if (parent && sampling.parentBased) return sampled;
  return sampling.rootOff ? sampled : true;
}
