import { expect } from 'chai';
import type { RunningServer } from '../../internal/rpc/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { serveStorage } from '../lib/storage.js';
import { BACKENDS, testBackend, type TestStore } from '../lib/backends.js';
import { Reflector } from '../../internal/storage/reflector.js';
import { encodeStored } from '../../internal/storage/objects.js';
import { waitFor } from '../lib/cluster.js';

const cm = (name: string, value: string) => encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { value } });

for (const backendName of BACKENDS) describe(`storage reflector (${backendName})`, function () {
  this.timeout(30_000);
  const backend = testBackend(backendName);
  let store: TestStore;
  let server: RunningServer;
  let client: StorageClient;

  before(async () => {
    store = await backend.open();
    server = await serveStorage(store);
    client = new StorageClient(`127.0.0.1:${server.port}`);
  });
  after(async () => {
    client.close();
    await server.stop();
    await store.close();
  });

  it('lists in pages, then follows creates, updates and deletes in order', async () => {
    for (let i = 0; i < 520; i++) await client.create(`core/configmaps/ns/c${i}`, cm(`c${i}`, '0'), `u${i}`);
    await client.create('core/secrets/ns/other', cm('other', 'x'), 'uo');
    const seen: string[] = [];
    const reflector = new Reflector(client, 'core/configmaps/', {
      upsert: (key, obj, old) => seen.push(`${old ? 'update' : 'add'} ${key} ${(obj as any).data.value}`),
      deleted: (key) => seen.push(`delete ${key}`),
    }).start();
    try {
      expect(await reflector.waitForSync(5000)).to.equal(true);
      expect(reflector.items.size).to.equal(520);
      expect(reflector.items.get('core/configmaps/ns/c7')?.metadata?.resourceVersion).to.match(/^\d+$/);
      seen.length = 0;
      await client.update('core/configmaps/ns/c1', cm('c1', '1'));
      await client.delete('core/configmaps/ns/c2');
      await client.create('core/configmaps/ns/new', cm('new', '2'), 'un');
      expect(await waitFor(() => seen.length === 3, 5000, 10)).to.equal(true);
      expect(seen).to.deep.equal(['update core/configmaps/ns/c1 1', 'delete core/configmaps/ns/c2', 'add core/configmaps/ns/new 2']);
      expect(reflector.items.has('core/secrets/ns/other')).to.equal(false);
    } finally {
      reflector.stop();
    }
  });

  it('keeps per key only what its projection returns', async () => {
    const reflector = new Reflector<string>(client, 'core/configmaps/', {}, (kv) => JSON.parse(kv.value.toString('utf8')).data.value).start();
    try {
      expect(await reflector.waitForSync(5000)).to.equal(true);
      expect(reflector.items.get('core/configmaps/ns/c1')).to.equal('1');
    } finally {
      reflector.stop();
    }
  });

  it('lists again after storage goes away and reports what changed meanwhile; is not live meanwhile', async () => {
    const seen: string[] = [];
    const reflector = new Reflector(client, 'core/configmaps/', { deleted: (key) => seen.push(`delete ${key}`) }).start();
    try {
      expect(await reflector.waitForSync(5000)).to.equal(true);
      expect(await waitFor(() => reflector.live, 5000, 10)).to.equal(true);
      const port = server.port;
      await server.stop();
      expect(await waitFor(() => !reflector.live, 5000, 10)).to.equal(true);
      await store.close();
      store = await backend.open({}, backend.lastId);
      await store.delete('core/configmaps/ns/c3');
      server = await serveStorage(store, `127.0.0.1:${port}`);
      expect(await waitFor(() => seen.includes('delete core/configmaps/ns/c3'), 10_000, 20)).to.equal(true);
      expect(reflector.items.has('core/configmaps/ns/c3')).to.equal(false);
      expect(await waitFor(() => reflector.live, 5000, 10)).to.equal(true);
    } finally {
      reflector.stop();
    }
  });
});
