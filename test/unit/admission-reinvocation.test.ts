import { expect } from 'chai';
import { Registry } from 'prom-client';
import { AdmissionChain, AdmissionError, type AdmissionPlugin, type AdmissionRequest, type JsonObject } from '../../internal/admission/index.js';

type Obj = Record<string, any>;

/** One webhook or policy of a fake dispatching plugin: `adds` is the data key it sets (to a value of its own) or none. */
interface Call { key: string; ifNeeded: boolean; adds?: string; value?: string }

const request = (data: Obj = {}): AdmissionRequest => ({
  uid: 'u', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' },
  subresource: '', name: 'cm', namespace: 'default', operation: 'CREATE', user: { username: 'jane', uid: '', groups: [], extra: {} },
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data }, dryRun: false,
});

const withData = (obj: JsonObject | undefined, key: string, value: string): JsonObject =>
  ({ ...obj, data: { ...(obj?.data as Obj), [key]: value } });

/** What every fake plugin did, in order: `<plugin>:<call>@<pass>`. */
let log: string[];

/** A plugin that dispatches to webhooks or policies as the two real ones do, through the request's tracker. */
function dispatching(name: string, calls: Call[]): AdmissionPlugin {
  return {
    name, phase: 'mutating', handles: () => true,
    async admit(req, reinvocation) {
      const tracker = reinvocation!.tracker(name);
      let object = req.object;
      let changed = false;
      for (const call of calls) {
        if (!tracker.shouldRun(call.key)) continue;
        log.push(`${name}:${call.key}@${reinvocation!.reinvoking ? 1 : 0}`);
        const value = call.value ?? call.key;
        const mutated = call.adds !== undefined && (object?.data as Obj)?.[call.adds] !== value;
        if (mutated) object = withData(object, call.adds!, value);
        tracker.ran(call.key, mutated, call.ifNeeded);
        changed ||= mutated;
      }
      return changed ? { object } : undefined;
    },
  };
}

/** An in-tree plugin: sets data[key] to what `value` makes of the object (idempotent when that does not change). */
function inTree(name: string, key?: string, value: (o: JsonObject) => string = () => name): AdmissionPlugin {
  return {
    name, phase: 'mutating', handles: () => true,
    async admit(req, reinvocation) {
      log.push(`${name}@${reinvocation!.reinvoking ? 1 : 0}`);
      return key ? { object: withData(req.object, key, value(req.object!)) } : undefined;
    },
  };
}

const dataOf = (res: Awaited<ReturnType<AdmissionChain['admit']>>): Obj => (res.allowed ? res.object?.data as Obj : {}) ?? {};

describe('admission reinvocation', () => {
  beforeEach(() => { log = []; });

  it('one pass when no webhook or policy changed the object, even when an in-tree plugin did', async () => {
    const chain = new AdmissionChain([
      inTree('Defaulter', 'defaulted'),
      dispatching('Policies', [{ key: 'p', ifNeeded: true }]),
      dispatching('Webhooks', [{ key: 'w', ifNeeded: true }]),
    ]);
    const res = await chain.admit(request());
    expect(log).to.deep.equal(['Defaulter@0', 'Policies:p@0', 'Webhooks:w@0']);
    expect(dataOf(res)).to.deep.equal({ defaulted: 'Defaulter' });
  });

  it('a webhook change after an IfNeeded policy runs the phase again: in-tree plugins and that policy, not a Never one', async () => {
    const chain = new AdmissionChain([
      inTree('Defaulter', 'defaulted'),
      dispatching('Policies', [{ key: 'if-needed', ifNeeded: true, adds: 'seen', value: 'x' }, { key: 'never', ifNeeded: false }]),
      dispatching('Webhooks', [{ key: 'hook', ifNeeded: false, adds: 'hooked' }]),
      { name: 'Check', phase: 'validating', handles: () => true, admit: async () => { log.push('Check'); } },
    ]);
    const res = await chain.admit(request());
    expect(log).to.deep.equal([
      'Defaulter@0', 'Policies:if-needed@0', 'Policies:never@0', 'Webhooks:hook@0',
      'Defaulter@1', 'Policies:if-needed@1',
      'Check',
    ]);
    expect(dataOf(res)).to.deep.equal({ defaulted: 'Defaulter', seen: 'x', hooked: 'hook' });
  });

  it('a change by any webhook or policy runs the in-tree plugins again even with no IfNeeded one (as the platform does)', async () => {
    const chain = new AdmissionChain([inTree('Defaulter'), dispatching('Webhooks', [{ key: 'a', ifNeeded: false, adds: 'a' }, { key: 'b', ifNeeded: false }])]);
    await chain.admit(request());
    expect(log).to.deep.equal(['Defaulter@0', 'Webhooks:a@0', 'Webhooks:b@0', 'Defaulter@1']);
  });

  it('within one plugin, an IfNeeded call runs again only when a call after it changed the object', async () => {
    const chain = new AdmissionChain([dispatching('Webhooks', [
      { key: 'early', ifNeeded: true }, { key: 'changer', ifNeeded: false, adds: 'c' }, { key: 'late', ifNeeded: true },
    ])]);
    await chain.admit(request());
    expect(log).to.deep.equal(['Webhooks:early@0', 'Webhooks:changer@0', 'Webhooks:late@0', 'Webhooks:early@1']);
  });

  it('in the second pass, an in-tree plugin that changes the object marks the IfNeeded calls that saw no change yet', async () => {
    for (const moves of [true, false]) {
      log = [];
      // The in-tree plugin counts the passes when `moves` (a plugin that is not idempotent, to show the mark).
      let passes = 0;
      const chain = new AdmissionChain([
        dispatching('Policies', [{ key: 'changer', ifNeeded: false, adds: 'p' }]),
        inTree('Counter', 'count', () => (moves ? String(++passes) : 'same')),
        dispatching('Webhooks', [{ key: 'if-needed', ifNeeded: true }]),
      ]);
      await chain.admit(request());
      const second = moves ? ['Webhooks:if-needed@1'] : [];
      expect(log, `moves=${moves}`).to.deep.equal(['Policies:changer@0', 'Counter@0', 'Webhooks:if-needed@0', 'Counter@1', ...second]);
    }
  });

  it('runs at most one extra pass, where each plugin\'s IfNeeded calls run again when another plugin changed the object since', async () => {
    const chain = new AdmissionChain([
      dispatching('Policies', [{ key: 'flip', ifNeeded: true, adds: 'n', value: 'flip' }]),
      dispatching('Webhooks', [{ key: 'flop', ifNeeded: true, adds: 'n', value: 'flop' }]),
    ]);
    const res = await chain.admit(request());
    expect(log).to.deep.equal(['Policies:flip@0', 'Webhooks:flop@0', 'Policies:flip@1', 'Webhooks:flop@1']);
    expect(dataOf(res)).to.deep.equal({ n: 'flop' });
  });

  it('keeps each request\'s state its own', async () => {
    const chain = new AdmissionChain([
      dispatching('Policies', [{ key: 'p', ifNeeded: true }]),
      dispatching('Webhooks', [{ key: 'w', ifNeeded: false, adds: 'w' }]),
    ]);
    await Promise.all([chain.admit(request()), chain.admit(request())]);
    expect(log.filter((l) => l === 'Policies:p@0')).to.have.length(2);
    expect(log.filter((l) => l === 'Policies:p@1')).to.have.length(2);
    log = [];
    // An object the webhook leaves as it is: no change, no second pass.
    await chain.admit(request({ w: 'w' }));
    expect(log).to.deep.equal(['Policies:p@0', 'Webhooks:w@0']);
  });

  it('a refusal in the second pass ends the chain with it', async () => {
    const refusing: AdmissionPlugin = {
      name: 'Refuser', phase: 'mutating', handles: () => true,
      admit: async (_req, reinvocation) => {
        if (reinvocation!.reinvoking) throw new AdmissionError(403, 'Forbidden', 'not twice');
      },
    };
    const chain = new AdmissionChain([refusing, dispatching('Webhooks', [{ key: 'w', ifNeeded: false, adds: 'w' }])]);
    expect(await chain.admit(request())).to.deep.include({ allowed: false, code: 403, message: 'not twice' });
  });

  it('observes the admit step once across both passes, and each plugin each time it ran', async () => {
    const registry = new Registry();
    const chain = new AdmissionChain([inTree('Defaulter'), dispatching('Webhooks', [{ key: 'w', ifNeeded: false, adds: 'w' }])], registry);
    await chain.admit(request());
    const counts = async (metric: string) => (await registry.getSingleMetric(metric)!.get()).values
      .filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count')).map((v) => [v.labels.name ?? v.labels.type, v.value]);
    expect(await counts('apiserver_admission_step_admission_duration_seconds')).to.deep.equal([['admit', 1]]);
    expect(await counts('apiserver_admission_controller_admission_duration_seconds')).to.deep.equal([['Defaulter', 2], ['Webhooks', 2]]);
  });
});
