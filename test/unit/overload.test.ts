// The pieces of overload protection that need no server: which requests are
// long-running or mutating, the Go durations of `?timeout=`, the in-flight limiter.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { Counter, Gauge, Registry } from 'prom-client';
import { setTimeout as sleep } from 'node:timers/promises';
import { InflightLimiter, isLongRunning, requestKindOf, type InflightMetrics } from '../../gateway/inflight.js';
import { requestInfo } from '../../gateway/requestinfo.js';
import { parseGoDuration } from '../../gateway/timeout.js';
import { StatusError } from '../../internal/apimachinery/status.js';

const info = (method: string, path: string, query = '') => requestInfo(method, path, new URLSearchParams(query));

describe('overload protection', () => {
  it('treats watches and streaming sub-resources as long-running, nothing else', () => {
    expect(isLongRunning(info('GET', '/api/v1/namespaces/a/pods', 'watch=true'))).to.equal(true);
    expect(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p', 'watch=1'))).to.equal(true);
    for (const sub of ['log', 'exec', 'attach', 'portforward', 'proxy']) {
      expect(isLongRunning(info('GET', `/api/v1/namespaces/a/pods/p/${sub}`)), sub).to.equal(true);
    }
    expect(isLongRunning(info('GET', '/api/v1/namespaces/a/pods', 'watch=false'))).to.equal(false);
    expect(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/status'))).to.equal(false);
    expect(isLongRunning(info('GET', '/log'))).to.equal(false);
  });

  it('counts get, list and watch as read-only and every other verb (a non-resource HEAD too, as upstream) as mutating', () => {
    expect(requestKindOf(info('GET', '/api/v1/pods'))).to.equal('readOnly');
    expect(requestKindOf(info('HEAD', '/api/v1/namespaces/a/pods/p'))).to.equal('readOnly');
    expect(requestKindOf(info('GET', '/version'))).to.equal('readOnly');
    expect(requestKindOf(info('POST', '/api/v1/namespaces/a/pods'))).to.equal('mutating');
    expect(requestKindOf(info('HEAD', '/version'))).to.equal('mutating');
  });

  it('reads Go durations', () => {
    expect(parseGoDuration('30s')).to.equal(30_000);
    expect(parseGoDuration('1m30s')).to.equal(90_000);
    expect(parseGoDuration('1.5h')).to.equal(5_400_000);
    expect(parseGoDuration('250ms')).to.equal(250);
    expect(parseGoDuration('0')).to.equal(0);
    expect(parseGoDuration('-1s')).to.equal(-1000);
    for (const bad of ['', '10', 's', '1d', '1s ', 'soon']) expect(parseGoDuration(bad), bad).to.equal(undefined);
  });

  it('refuses one request over the limit with 429, lets system:masters past, and frees the slot when a request ends', async () => {
    const registry = new Registry();
    const metrics = {
      inflight: new Gauge({ name: 'inflight', help: 'h', labelNames: ['request_kind'], registers: [registry] }),
      dropped: new Counter({ name: 'dropped', help: 'h', labelNames: ['request_kind'], registers: [registry] }),
    };
    const limiter = new InflightLimiter({ readOnly: 1, mutating: 0 }, metrics);
    const enter = (groups: string[], method = 'GET', state: { terminated?: boolean } = {}) => limiter.enter(info(method, '/api/v1/pods'), { groups } as any, state);
    const held = enter(['dev']);
    expect(held).to.equal('readOnly');
    const state: { terminated?: boolean } = {};
    const refused = (() => { try { return enter(['dev'], 'GET', state); } catch (err) { return err; } })();
    expect(refused).to.be.instanceOf(StatusError);
    expect((refused as StatusError).code).to.equal(429);
    expect((refused as StatusError).headers).to.deep.equal({ 'Retry-After': '1' });
    expect(state.terminated).to.equal(true);
    limiter.leave(enter(['system:masters'])!);
    limiter.leave(enter(['dev'], 'POST')!); // 0: no mutating limit
    expect(limiter.enter(info('GET', '/api/v1/pods', 'watch=true'), { groups: ['dev'] } as any, {})).to.equal(undefined); // long-running: no slot
    expect((await metrics.dropped.get()).values).to.deep.equal([{ value: 1, labels: { request_kind: 'readOnly' } }]);
    limiter.leave(held!);
    limiter.leave(enter(['dev'])!);
  });

  it('publishes the in-flight watermark of each period while requests come and go, and nothing once idle', async () => {
    const published: Array<[string, number]> = [];
    const metrics = {
      inflight: { set: (labels: { request_kind: string }, value: number) => published.push([labels.request_kind, value]) },
      dropped: { inc: () => undefined },
    } as unknown as InflightMetrics;
    const limiter = new InflightLimiter({ readOnly: 0, mutating: 0 }, metrics, 20);
    published.length = 0;
    const first = limiter.enter(info('GET', '/api/v1/pods'), undefined, {})!;
    limiter.leave(limiter.enter(info('GET', '/api/v1/pods'), undefined, {})!);
    limiter.leave(first);
    await sleep(150);
    const readOnly = published.filter(([kind]) => kind === 'readOnly').map(([, value]) => value);
    expect(readOnly[0], 'the period\'s highest count').to.equal(2);
    expect(readOnly.at(-1), 'then none in flight').to.equal(0);
    const count = published.length;
    await sleep(100);
    expect(published.length, 'an idle limiter publishes nothing more').to.equal(count);
    limiter.leave(limiter.enter(info('POST', '/api/v1/pods'), undefined, {})!);
    await sleep(60);
    expect(published.slice(count)).to.deep.include(['mutating', 1]);
  });

  it('logs a stray rejection and exception with the request they came from, and the process lives on', () => {
    const stray = new URL('../../gateway/stray.js', import.meta.url).href;
    const script = `
      const { logStrayErrors, requestScope } = await import(${JSON.stringify(stray)});
      logStrayErrors('gateway');
      await requestScope({ method: 'GET', path: '/api/v1/pods' }, async () => {
        Promise.reject(new Error('nobody awaits this'));
        setTimeout(() => { throw new Error('thrown from a timer'); }, 10);
      });
      setTimeout(() => console.log('still serving'), 100);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.contain('still serving');
    expect(run.stderr).to.contain('gateway: unhandled rejection during GET /api/v1/pods: Error: nobody awaits this');
    expect(run.stderr).to.contain('gateway: uncaught exception during GET /api/v1/pods: Error: thrown from a timer');
  });
});
