// The controller reference manager: what a controller claims of the objects it
// sees (its own that match, orphans it adopts), what it releases, what it leaves
// alone, the patches it sends, and the fresh read of the owner before adopting.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { ControllerRefManager, type PatchResult, type RefManagerOptions } from '../../internal/controllers/refmanager.js';

const TYPE = { apiVersion: 'batch/v1', kind: 'Job' };
const owner = (extra: Record<string, unknown> = {}): ApiObject => ({ metadata: { name: 'j', namespace: 'ns', uid: 'job-uid', ...extra } });
const REF = { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true, blockOwnerDeletion: true };
const pod = (name: string, app: string, meta: Record<string, unknown> = {}): ApiObject =>
  ({ metadata: { name, namespace: 'ns', uid: `${name}-uid`, labels: { app }, ...meta } });
const ownedBy = (uid: string) => ({ ownerReferences: [{ ...REF, uid }] });

describe('controllers: controller reference manager', () => {
  let patches: { name: string; patch: any }[];
  let rechecks: number;
  let answer: (name: string) => PatchResult;
  let recheck: () => Promise<void>;
  beforeEach(() => {
    patches = [];
    rechecks = 0;
    answer = () => ({ status: 200 });
    recheck = async () => undefined;
  });
  const manager = (o: ApiObject = owner(), extra: Partial<RefManagerOptions<ApiObject>> = {}) => new ControllerRefManager<ApiObject>({
    owner: o, ownerType: TYPE, finalizers: ['batch.svc.io/job-tracking'],
    matches: (p) => p.metadata?.labels?.app === 'a',
    canAdopt: () => { rechecks++; return recheck(); },
    patch: async (p, patch) => { patches.push({ name: p.metadata!.name!, patch }); return answer(p.metadata!.name!); },
    ...extra,
  });

  it('keeps its own matching objects without a request, adopts matching orphans, releases its own that no longer match', async () => {
    const mine = pod('mine', 'a', ownedBy('job-uid'));
    const orphan = pod('orphan', 'a');
    const stray = pod('stray', 'b', ownedBy('job-uid'));
    const res = await manager().claim([mine, orphan, stray]);
    expect(res.claimed).to.deep.equal([mine, orphan]);
    expect(res.adopted).to.deep.equal([orphan]);
    expect(res.released).to.deep.equal([stray]);
    expect(res.errors).to.deep.equal([]);
    expect(patches).to.deep.include({ name: 'orphan', patch: { metadata: { uid: 'orphan-uid', ownerReferences: [REF], finalizers: ['batch.svc.io/job-tracking'] } } });
    expect(patches).to.deep.include({
      name: 'stray',
      patch: { metadata: { uid: 'stray-uid', ownerReferences: [{ $patch: 'delete', uid: 'job-uid' }], '$deleteFromPrimitiveList/finalizers': ['batch.svc.io/job-tracking'] } },
    });
    expect(patches).to.have.length(2);
    expect(rechecks).to.equal(1);
  });

  it('leaves alone objects another controller owns, orphans that do not match, orphans being deleted and orphans of another namespace', async () => {
    const objects = [
      pod('theirs', 'a', ownedBy('other-uid')), pod('unmatched', 'b'), pod('going', 'a', { deletionTimestamp: '2025-01-01T00:00:00Z' }),
      { metadata: { ...pod('elsewhere', 'a').metadata, namespace: 'other' } },
    ];
    const res = await manager().claim(objects);
    expect(res).to.deep.equal({ claimed: [], adopted: [], released: [], errors: [] });
    expect(patches).to.deep.equal([]);
    expect(rechecks).to.equal(0);
  });

  it('an owner being deleted neither adopts nor releases, but keeps what it owns', async () => {
    const mine = pod('mine', 'a', ownedBy('job-uid'));
    const res = await manager(owner({ deletionTimestamp: '2025-01-01T00:00:00Z' })).claim([mine, pod('orphan', 'a'), pod('stray', 'b', ownedBy('job-uid'))]);
    expect(res.claimed).to.deep.equal([mine]);
    expect(patches).to.deep.equal([]);
  });

  it('reads the owner afresh once before adopting; when that fails nothing is adopted and the reason is reported', async () => {
    recheck = async () => { throw new Error('original Job ns/j is gone: got uid new-uid, wanted job-uid'); };
    const res = await manager().claim([pod('o1', 'a'), pod('o2', 'a')]);
    expect(res.claimed).to.deep.equal([]);
    expect(res.errors).to.have.length(2);
    expect(res.errors[0]).to.match(/^can't adopt ns\/o\d \(o\d-uid\): original Job ns\/j is gone/);
    expect(patches).to.deep.equal([]);
    expect(rechecks).to.equal(1);
  });

  it('an object gone (404) is neither adopted nor an error; a refused adoption is an error; a release of an object replaced (422) is not', async () => {
    answer = (name) => ({ status: name === 'gone' ? 404 : name === 'refused' ? 409 : name === 'replaced' ? 422 : 200, message: 'conflict' });
    const res = await manager().claim([pod('gone', 'a'), pod('refused', 'a'), pod('replaced', 'b', ownedBy('job-uid'))]);
    expect(res.claimed).to.deep.equal([]);
    expect(res.released).to.deep.equal([]);
    expect(res.errors).to.deep.equal(['adopting ns/refused (refused-uid): 409 conflict']);
  });

  it('a release refused for another reason is an error, and the object is not claimed', async () => {
    answer = () => ({ status: 0, message: 'connect ECONNREFUSED' });
    const res = await manager().claim([pod('stray', 'b', ownedBy('job-uid'))]);
    expect(res.claimed).to.deep.equal([]);
    expect(res.errors).to.deep.equal(['releasing ns/stray (stray-uid): 0 connect ECONNREFUSED']);
  });
});
