// The gateway's follower of stored CRDs: a stored CRD of any shape (malformed, or
// written before today's validation) is not served, and never stops the others.
import { expect } from 'chai';
import { waitFor } from '../lib/cluster.js';
import { CustomKinds } from '../../gateway/customkinds.js';
import type { HubWatcher, WatchHub } from '../../gateway/hub.js';
import { group } from '../../internal/names/index.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import type { KeyValue, StorageClient } from '../../internal/storage/client.js';
import { collectionPrefix } from '../../internal/storage/keys.js';

const PREFIX = collectionPrefix(group('apiextensions'), 'customresourcedefinitions');
const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } };

const crd = (name: string, spec: unknown, status: unknown = { conditions: [{ type: 'Established', status: 'True' }] }) =>
  JSON.stringify({ metadata: { name }, spec, status });
const good = (plural: string) => crd(`${plural}.x.example.com`, {
  group: 'x.example.com', scope: 'Namespaced', names: { plural, kind: plural[0].toUpperCase() + plural.slice(1, -1) },
  versions: [{ name: 'v1', served: true, storage: true, schema }],
});

/** Stored CRDs as storage hands them out, one revision each, keyed by the name given. */
const stored = (values: Record<string, string>): KeyValue[] =>
  Object.entries(values).map(([name, value], i) => ({ key: `${PREFIX}${name}`, value: Buffer.from(value), modRevision: i + 1 }) as KeyValue);

/** A follower of what `listed()` answers (a storage failure when it throws), and its hub watcher's calls. */
function follower(listed: () => KeyValue[]) {
  const registry = builtinRegistry();
  let watcher: HubWatcher | undefined;
  const hub = { register: (_prefix: string, w: HubWatcher) => { watcher = w; return () => undefined; } } as unknown as WatchHub;
  const storage = { list: async () => { const items = listed(); return { items, revision: 100, more: false }; } } as unknown as StorageClient;
  const kinds = new CustomKinds(storage, registry, hub);
  const served = (resource: string) => registry.lookup('x.example.com', 'v1', resource) !== undefined;
  return { kinds, served, event: (kv: KeyValue) => watcher!.onEvent({ type: 'PUT', kv, revision: kv.modRevision } as never), fail: () => watcher!.onFail('lost') };
}

describe('apiextensions: the gateway follows stored CRDs of any shape', () => {
  const malformed = {
    'notjson.x.example.com': '{not json',
    'nospec.x.example.com': crd('nospec.x.example.com', 'a string'),
    'badversions.x.example.com': crd('badversions.x.example.com', { group: 'x.example.com', names: { plural: 'b', kind: 'B' }, versions: [7, null, { name: 3 }] }),
    'badschema.x.example.com': crd('badschema.x.example.com', {
      group: 'x.example.com', names: { plural: 'c', kind: 'C' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: 'x', items: 5, allOf: 'y' } } }],
    }, { conditions: 'none', storedVersions: 9 }),
    'nometa.x.example.com': '{"spec":null,"status":{"conditions":[{"type":"Established","status":"True"}]}}',
  };

  it('the list at start serves the sound ones and skips the rest', async () => {
    const f = follower(() => stored({ ...malformed, 'widgets.x.example.com': good('widgets') }));
    await f.kinds.start();
    expect(f.served('widgets')).to.equal(true);
    expect(['b', 'c'].some(f.served)).to.equal(false);
    f.kinds.close();
  });

  it('events: a malformed CRD is dropped and a later sound one is served', async () => {
    const f = follower(() => []);
    await f.kinds.start();
    for (const kv of stored(malformed)) expect(() => f.event(kv)).not.to.throw();
    const [gadgets] = stored({ 'gadgets.x.example.com': good('gadgets') });
    f.event({ ...gadgets, modRevision: 10 } as KeyValue);
    expect(f.served('gadgets')).to.equal(true);
    // The same CRD overwritten with garbage stops being served, rather than serving its old kinds.
    f.event({ ...gadgets, value: Buffer.from('{"spec":'), modRevision: 11 } as KeyValue);
    expect(f.served('gadgets')).to.equal(false);
    f.kinds.close();
  });

  it('a lost stream is listed again, retried until storage answers', async () => {
    let answers: () => KeyValue[] = () => [];
    const f = follower(() => answers());
    await f.kinds.start();
    answers = () => { answers = () => stored({ 'gizmos.x.example.com': good('gizmos') }); throw new Error('unavailable'); };
    f.fail();
    expect(await waitFor(() => f.served('gizmos'), 5000, 50)).to.equal(true);
    f.kinds.close();
  });
});
