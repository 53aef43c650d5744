import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, TraceFlags, trace, type SpanContext } from '@opentelemetry/api';
import * as sdk from '@opentelemetry/sdk-trace';
import { maySample, samplingFromEnv, sdkSampler } from '../../internal/tracing/sampling.js';

const parent = (sampled: boolean): SpanContext => ({
  traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), isRemote: true,
  traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
});

function sampling(sampler?: string, arg?: string) {
  const warnings: string[] = [];
  const env: NodeJS.ProcessEnv = {};
  if (sampler !== undefined) env.OTEL_TRACES_SAMPLER = sampler;
  if (arg !== undefined) env.OTEL_TRACES_SAMPLER_ARG = arg;
  const parsed = samplingFromEnv(env, (m) => warnings.push(m));
  return { ...parsed, sampler: sdkSampler(parsed, sdk), warnings };
}

/** What the SDK sampler itself decides for a root span. */
const sdkSamples = (s: ReturnType<typeof sampling>, under?: SpanContext) => s.sampler.shouldSample(
  under ? trace.setSpanContext(ROOT_CONTEXT, under) : ROOT_CONTEXT, under?.traceId ?? randomBytes(16).toString('hex'), 'x', 0, {}, [],
).decision === sdk.SamplingDecision.RECORD_AND_SAMPLED;

describe('tracing: samplers from the environment', () => {
  it('is parentbased_always_on when OTEL_TRACES_SAMPLER is unset or empty, as the SDK is', () => {
    for (const s of [sampling(), sampling('')]) {
      expect(s.name).to.equal('parentbased_always_on');
      expect(s.warnings).to.deep.equal([]);
      expect([maySample(s, undefined), maySample(s, parent(true)), maySample(s, parent(false))]).to.deep.equal([true, true, false]);
    }
  });

  it('falls back to parentbased_always_on, with a warning, for a sampler it does not know', () => {
    const s = sampling('jaeger_remote');
    expect(s.name).to.equal('parentbased_always_on');
    expect(s.warnings).to.have.length(1);
    expect(s.warnings[0]).to.include('jaeger_remote');
  });

  it('never builds a span under always_off or parentbased_always_off unless a sampled parent asks', () => {
    const off = sampling('always_off');
    expect([maySample(off, undefined), maySample(off, parent(false))]).to.deep.equal([false, false]);
    // The SDK makes the unsampled child that clears the flag for the next hops.
    expect(maySample(off, parent(true))).to.equal(true);
    expect(sdkSamples(off, parent(true))).to.equal(false);
    const pbOff = sampling('PARENTBASED_ALWAYS_OFF');
    expect([maySample(pbOff, undefined), maySample(pbOff, parent(true)), maySample(pbOff, parent(false))]).to.deep.equal([false, true, false]);
    expect(sdkSamples(pbOff, parent(true))).to.equal(true);
  });

  it('always_on samples everything, whatever the parent says', () => {
    const on = sampling('always_on');
    expect([maySample(on, undefined), maySample(on, parent(false))]).to.deep.equal([true, true]);
    expect(sdkSamples(on, parent(false))).to.equal(true);
  });

  it('reads the traceidratio ratio from OTEL_TRACES_SAMPLER_ARG: 1 when unset, and when out of range (with a warning)', () => {
    expect(maySample(sampling('traceidratio', '0'), undefined)).to.equal(false);
    expect(sdkSamples(sampling('traceidratio', '0'), parent(true))).to.equal(false);
    for (const [arg, warned] of [[undefined, 0], ['1', 0], ['1.5', 1], ['lots', 1]] as const) {
      const s = sampling('traceidratio', arg);
      expect(s.warnings, String(arg)).to.have.length(warned);
      expect(Array.from({ length: 20 }, () => sdkSamples(s)).every(Boolean), String(arg)).to.equal(true);
    }
    const half = sampling('traceidratio', '0.5');
    const decisions = Array.from({ length: 400 }, () => sdkSamples(half));
    expect(decisions.filter(Boolean).length).to.be.within(120, 280);
  });

  it('parentbased_traceidratio follows a parent, and samples roots at the ratio', () => {
    const s = sampling('parentbased_traceidratio', '0');
    expect([maySample(s, undefined), maySample(s, parent(true)), maySample(s, parent(false))]).to.deep.equal([false, true, false]);
    expect(sdkSamples(s, parent(true))).to.equal(true);
    expect(sdkSamples(s)).to.equal(false);
  });
});
