import { expect } from 'chai';
import type { RunningServer } from '../../internal/rpc/index.js';
import { StorageClient, type StorageEvent } from '../../internal/storage/client.js';
import { serveStorage } from '../lib/storage.js';
import { BACKENDS, testBackend, type TestStore } from '../lib/backends.js';

async function waitUntil(what: string, ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const backendName of BACKENDS) describe(`storage gRPC service (${backendName})`, function () {
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

  it('releases a followed watch when the client cancels it', async () => {
    const created = await client.create('core/pods/ns/a', Buffer.from('1'), 'ua');
    const stream = client.watch('core/pods/', Number(created.kv!.modRevision) - 1, true);
    const received: StorageEvent[] = [];
    stream.on('data', (e: StorageEvent) => received.push(e));
    stream.on('error', () => undefined); // CANCELLED
    await waitUntil('history and progress', () => received.length === 2);
    expect(received.map((e) => e.type)).to.deep.equal(['PUT', 'PROGRESS']);
    expect(store.activeWatches).to.equal(1);
    const updated = await client.update('core/pods/ns/a', Buffer.from('2'));
    await waitUntil('the live event', () => received.length === 3);
    expect(received[2]).to.include({ type: 'PUT', revision: updated.kv!.modRevision });
    stream.cancel();
    await waitUntil('the watch to be released', () => store.activeWatches === 0);
  });

  it('keeps a slow watcher ordered under backpressure', async () => {
    const stream = client.watch('core/big/', Number((await client.currentRevision()).revision), true);
    const revisions: number[] = [];
    stream.on('data', (e: StorageEvent) => {
      revisions.push(e.revision);
      if (revisions.length % 50 === 0) { stream.pause(); setTimeout(() => stream.resume(), 5); }
    });
    stream.on('error', () => undefined);
    await waitUntil('progress', () => revisions.length === 1);
    const value = Buffer.alloc(64 * 1024, 'x');
    const written = await Promise.all(Array.from({ length: 300 }, (_, i) => client.create(`core/big/ns/k${i}`, value, `u${i}`)));
    const expected = written.map((w) => w.revision).sort((a, b) => a - b);
    await waitUntil('every event', () => revisions.length === 301, 20_000);
    expect(revisions.slice(1)).to.deep.equal(expected);
    stream.cancel();
    await waitUntil('the watch to be released', () => store.activeWatches === 0);
  });
});
