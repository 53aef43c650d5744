// A crash of the whole server (SIGKILL to the launcher and every child at once)
// with many objects stored and a writer that keeps going: the launcher started
// again on the same data dir serves again by itself, and every create that was
// acknowledged before or after the crash is there with its data. The object count
// is RESTART_OBJECTS (default 100,000), seeded straight into the store.
import { expect } from 'chai';
import { join } from 'node:path';
import { LedgerWriter } from '../lib/ledger.js';
import { Launcher, READY, kubeRequest, tempDir } from '../lib/launcher.js';
import { seedObjects } from '../lib/seed.js';

const OBJECTS = Number(process.env.RESTART_OBJECTS ?? 100_000);
const NAMESPACES = 10;
const SECRETS = 1000;
const ROLES = 200;
/** How long the server may take to serve again after the crash. */
const SERVE_AGAIN_MS = 90_000;

describe(`restart: a whole-group SIGKILL with ${OBJECTS} objects stored, under a steady writer`, function () {
  this.timeout(240_000);
  const dataDir = tempDir();
  let port = 0;
  let first: Launcher | undefined;
  let second: Launcher | undefined;
  let writer: LedgerWriter | undefined;
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  const send = (method: string, path: string, body?: unknown) => kubeRequest(kubeconfig, method, path, body);

  before(async () => {
    const seeded = await seedObjects(dataDir, { configMaps: OBJECTS, secrets: SECRETS, roles: ROLES, namespaces: NAMESPACES });
    expect(seeded).to.equal(NAMESPACES + OBJECTS + SECRETS + 2 * ROLES);
    first = new Launcher(dataDir, ['--secure-port=0']);
    expect(await first.ready(120_000), `${first.stdout}\n${first.stderr}`).to.equal(true);
    port = first.servingPort; // the second launcher serves where the writer's kubeconfig points
  });

  after(async () => {
    await writer?.stop();
    await first?.destroy(true);
    await second?.destroy();
  });

  it('serves the seeded objects', async () => {
    const res = await send('GET', `/api/v1/namespaces/seed-1/configmaps?limit=1`);
    expect(res.status).to.equal(200);
    expect(res.body.items[0].metadata.name).to.match(/^cm-\d+$/);
    expect(res.body.metadata.remainingItemCount + 1).to.equal(OBJECTS / NAMESPACES);
  });

  it('comes back by itself after the crash, with every acknowledged create', async () => {
    writer = new LedgerWriter(send, 'seed-0').start();
    expect(await writer.acks(50, 30_000), writer.describe()).to.equal(true);
    const crash = await first!.crash();
    expect(crash.gone, `still running among ${crash.pids}`).to.equal(true);
    expect(crash.pids.length).to.equal(8); // the launcher, nats-server and six services
    const acksAtCrash = writer.acked.size;

    const crashed = Date.now();
    second = new Launcher(dataDir, [`--secure-port=${port}`]);
    expect(await second.ready(SERVE_AGAIN_MS), `${second.stdout}\n${second.stderr}`).to.equal(true);
    const started = second.stdout.split('\n').filter((l) => / healthy (?:on \S+ )?after /.test(l)).map((l) => l.replace('svc-apiserver: ', ''));
    console.log(`      serving again ${((Date.now() - crashed) / 1000).toFixed(1)}s after the crash (${started.join(', ')})`);
    expect(second.stdout).to.include(`${READY} on https://127.0.0.1:${port}`);
    // The writer's retries get through again on their own.
    expect(await writer.acks(50, 30_000), writer.describe()).to.equal(true);
    await writer.stop();
    expect(writer.acked.size).to.be.greaterThan(acksAtCrash);
    expect(await writer.lost(), writer.describe()).to.deep.equal([]);
  });

  it('keeps every seeded object through the crash', async () => {
    for (const ns of ['seed-1', `seed-${NAMESPACES - 1}`]) {
      const res = await send('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
      expect(res.status).to.equal(200);
      expect(res.body.metadata.remainingItemCount + 1, ns).to.equal(OBJECTS / NAMESPACES);
    }
    const secret = await send('GET', `/api/v1/namespaces/seed-3/secrets/secret-3`);
    expect(secret.status).to.equal(200);
    expect(Buffer.from(secret.body.data.k, 'base64').toString()).to.equal('v3');
  });
});
