// The launcher's replicated topology on one machine, as `make run-ha` starts it: 3 etcd
// members, 3 NATS nodes, 2 of every service. A write through one gateway is read and
// watched through the other; a gateway and a storage replica killed with SIGKILL are
// restarted where they were while the others serve; a stop leaves no process behind.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { waitFor } from '../lib/cluster.js';
import { Launcher, SERVICES, alive, childrenOf, gone, kubeRequest, kubeWatch, mentioning, tempDir } from '../lib/launcher.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const ARGS = ['--replicas=2', '--etcd-members=3', '--etcd-port=0', '--nats-nodes=3', '--secure-port=0'];

describe('launcher: the replicated topology (--replicas=2 --etcd-members=3 --nats-nodes=3)', function () {
  this.timeout(180_000);
  let launcher: Launcher;
  let kubeconfig = '';
  /** Every process the launcher ran, restarted ones included. */
  const seen = new Set<number>();
  const kids = () => {
    const now = childrenOf(launcher.pid);
    for (const k of now) seen.add(k.pid);
    return now;
  };
  const running = (program: string) => kids().filter((k) => k.cmdline.includes(`/cmd/${program}/main.js `));
  const flagOf = (cmdline: string, flag: string) => cmdline.split(' ').find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);

  before(async () => {
    launcher = new Launcher(tempDir(), ARGS);
    expect(await launcher.ready(150_000), `${launcher.stdout}\n${launcher.stderr}`).to.equal(true);
    kubeconfig = join(launcher.dataDir, 'gateways.kubeconfig');
  });

  after(async () => { await launcher?.destroy(); });

  it('runs 3 etcd members, 3 NATS nodes and 2 of every service, each client given every address', () => {
    const all = kids();
    expect(all.filter((k) => k.cmdline.includes('--initial-cluster='))).to.have.length(3);
    expect(all.filter((k) => k.cmdline.startsWith('nats-server '))).to.have.length(3);
    for (const s of SERVICES) expect(running(s), s).to.have.length(2);
    expect(all).to.have.length(3 + 3 + 2 * SERVICES.length);
    const nats = ['nats-1', 'nats-2', 'nats-3'].map((n) => `nats://${launcher.announced(n)[0]}`).join(',');
    for (const gateway of running('gateway')) {
      expect(flagOf(gateway.cmdline, 'nats-url')).to.equal(nats);
      for (const peer of ['storage', 'authn', 'authz', 'admission']) {
        const both = [1, 2].map((i) => `unix://${join(launcher.dataDir, 'run', `${peer}-${i}.sock`)}`).join(',');
        expect(flagOf(gateway.cmdline, `${peer}-address`), peer).to.equal(both);
      }
    }
    for (const storage of running('storage')) {
      expect(flagOf(storage.cmdline, 'storage-backend')).to.equal('etcd3');
      expect(flagOf(storage.cmdline, 'etcd-servers')!.split(',')).to.have.length(3);
    }
  });

  it('prints both gateways and writes a kubeconfig with a context for each', () => {
    const ports = [1, 2].map((i) => Number(launcher.announced(`gateway-${i}`)[0].split(':')[1]));
    const urls = ports.map((p) => `https://127.0.0.1:${p}`);
    expect(launcher.stdout).to.include(`svc-apiserver is ready on ${urls.join(', ')}`);
    expect(launcher.stdout).to.include(`export KUBECONFIG=${kubeconfig}`);
    const config = parse(readFileSync(kubeconfig, 'utf8'));
    expect(config.contexts.map((c: { name: string }) => c.name)).to.deep.equal(['gateway-1', 'gateway-2']);
    expect(config.clusters.map((c: { cluster: { server: string } }) => c.cluster.server)).to.deep.equal(urls);
    expect(config['current-context']).to.equal('gateway-1');
  });

  it('serves a write through gateway 1 to a read and a watch through gateway 2', async () => {
    const list = await kubeRequest(kubeconfig, 'GET', CMS, undefined, 1);
    expect(list.status).to.equal(200);
    const watch = kubeWatch(kubeconfig, `${CMS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, 1);
    try {
      const created = await kubeRequest(kubeconfig, 'POST', CMS, cm('through-one'), 0);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const read = await kubeRequest(kubeconfig, 'GET', `${CMS}/through-one`, undefined, 1);
      expect(read.status).to.equal(200);
      expect(read.body.metadata.uid).to.equal(created.body.metadata.uid);
      expect(await waitFor(() => watch.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'through-one'), 10_000), JSON.stringify(watch.events)).to.equal(true);
      const added = watch.events.find((e) => e.object.metadata.name === 'through-one')!;
      expect(added.object.metadata.resourceVersion).to.equal(created.body.metadata.resourceVersion);
    } finally {
      watch.close();
    }
  });

  it('restarts a gateway killed with SIGKILL on its port, the other serving meanwhile', async () => {
    const [victim] = running('gateway');
    process.kill(victim.pid, 'SIGKILL');
    let n = 0;
    expect(await waitFor(() => { n = Number(/\[gateway-(\d)\] exited \(SIGKILL\)/.exec(launcher.stdout)?.[1] ?? 0); return n > 0; }, 10_000), launcher.stdout).to.equal(true);
    expect((await kubeRequest(kubeconfig, 'GET', '/readyz', undefined, 2 - n)).status).to.equal(200);
    expect(await waitFor(() => launcher.announced(`gateway-${n}`).length === 2, 30_000), launcher.stdout).to.equal(true);
    const [before, after] = launcher.announced(`gateway-${n}`);
    expect(after).to.equal(before);
    expect(await waitFor(async () => (await kubeRequest(kubeconfig, 'GET', '/readyz', undefined, n - 1)).status === 200, 30_000)).to.equal(true);
    expect(running('gateway').map((k) => k.pid)).to.have.length(2).and.not.include(victim.pid);
  });

  it('restarts a storage replica killed with SIGKILL, writes going on through the other', async () => {
    const socket = join(launcher.dataDir, 'run', 'storage-1.sock');
    const [victim] = running('storage').filter((k) => k.cmdline.includes(socket));
    process.kill(victim.pid, 'SIGKILL');
    // Each attempt a new name: an attempt cut off by the kill may have been stored.
    let attempt = 0;
    expect(await waitFor(async () => (await kubeRequest(kubeconfig, 'POST', CMS, cm(`during-${attempt++}`), 1)).status === 201, 20_000)).to.equal(true);
    expect(await waitFor(() => launcher.announced('storage-1').length === 2, 30_000), launcher.stdout).to.equal(true);
    expect(launcher.stdout).to.include('[storage-1] exited (SIGKILL); restarting in 1000 ms');
    expect(launcher.announced('storage-1')).to.deep.equal([`unix://${socket}`, `unix://${socket}`]);
    const read = await kubeRequest(kubeconfig, 'GET', `${CMS}/during-${attempt - 1}`, undefined, 0);
    expect(read.status).to.equal(200);
    expect(running('storage').map((k) => k.pid)).to.have.length(2).and.not.include(victim.pid);
  });

  it('stops every process it ran on SIGTERM, etcd and NATS included', async () => {
    const pids = [...new Set([launcher.pid, ...kids().map((k) => k.pid), ...seen])];
    expect(pids.filter(alive)).to.have.length(1 + 3 + 3 + 2 * SERVICES.length);
    process.kill(launcher.pid, 'SIGTERM');
    expect(await launcher.exit(60_000)).to.deep.equal({ code: 0, signal: null });
    expect(await waitFor(() => gone(pids) && mentioning(launcher.dataDir).length === 0, 10_000), String(pids.filter(alive))).to.equal(true);
  });
});
