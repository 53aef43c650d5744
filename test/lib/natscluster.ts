// A NATS cluster for tests: nats-server nodes on loopback joined by cluster
// routes (a full mesh), each on free ports it picks itself (client, route and
// monitoring ports announced in its log), with its PID file in a temp dir. A node
// can be killed (SIGKILL, as a crash) and started again on the same client port,
// soliciting routes to the others; every node is stopped by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const CLUSTER_NAME = 'svc-test';

const CLIENT_LINE = /Listening for client connections on 127\.0\.0\.1:(\d+)/;
const ROUTE_LINE = /Listening for route connections on 127\.0\.0\.1:(\d+)/;
const MONITOR_LINE = /Starting http monitor on 127\.0\.0\.1:(\d+)/;

export interface NatsNode {
  /** Its client URL. */
  url: string;
  port: number;
  routePort: number;
  monitorPort: number;
  pid: number;
  proc: ChildProcess;
}

/** Polls until check resolves true; false after timeoutMs. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** A node's monitoring endpoint (`routez`, `connz`, ...) as JSON. */
async function monitor(node: NatsNode, endpoint: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${node.monitorPort}/${endpoint}`);
  return res.json();
}

export class NatsCluster {
  readonly nodes: Array<NatsNode | undefined> = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'svc-natscluster-'));
  /** The client port of each node, kept across restarts: clients are given these URLs once. */
  private readonly ports: number[] = [];

  /** The client URLs of every node, as a comma list (for --nats-url). */
  get urls(): string {
    return this.ports.map((p) => `nats://127.0.0.1:${p}`).join(',');
  }

  /** Starts `size` nodes, each soliciting routes to those before it, and waits for the full mesh. */
  async start(size = 3): Promise<this> {
    try {
      for (let i = 0; i < size; i++) await this.startNode(i);
      await this.meshed();
      return this;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Starts node i (again: on its client port), with routes to the nodes that run, and waits for the full mesh. */
  async restart(i: number): Promise<void> {
    await this.startNode(i);
    await this.meshed();
  }

  /** SIGKILLs node i, as a crash, and waits for it to exit. */
  async kill(i: number): Promise<void> {
    const node = this.nodes[i];
    if (!node) return;
    this.nodes[i] = undefined;
    await exit(node.proc, 'SIGKILL');
  }

  /** The index of the node a client named `name` (nats.js's `name` option) is connected to, if any. */
  async nodeOf(name: string): Promise<number | undefined> {
    for (const [i, node] of this.nodes.entries()) {
      if (!node) continue;
      const connz = await monitor(node, 'connz').catch(() => undefined);
      if (connz?.connections?.some((c: { name?: string }) => c.name === name)) return i;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node && exit(node.proc, 'SIGTERM')));
    this.nodes.length = 0;
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async startNode(i: number): Promise<void> {
    const routes = this.nodes.filter((n): n is NatsNode => Boolean(n)).map((n) => `nats://127.0.0.1:${n.routePort}`);
    const args = ['-a', '127.0.0.1', '-p', String(this.ports[i] ?? -1), '-m', '-1', '-P', join(this.dir, `node-${i}.pid`),
      '--cluster_name', CLUSTER_NAME, '--cluster', 'nats://127.0.0.1:-1', ...(routes.length ? ['--routes', routes.join(',')] : [])];
    const proc = spawn(NATS_SERVER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const ports = await new Promise<number[]>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`nats-server node ${i} did not start within ${START_TIMEOUT_MS} ms:\n${log}`)), START_TIMEOUT_MS);
      const fail = (err: Error): void => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(err);
      };
      const onExit = (code: number | null): void => fail(new Error(`nats-server node ${i} exited with ${code}:\n${log}`));
      const onData = (chunk: string): void => {
        log += chunk;
        const found = [CLIENT_LINE, ROUTE_LINE, MONITOR_LINE].map((re) => re.exec(log)?.[1]);
        if (found.some((p) => p === undefined)) return;
        clearTimeout(timer);
        proc.off('exit', onExit).off('error', fail);
        proc.stderr!.off('data', onData).resume();
        resolve(found.map(Number));
      };
      proc.once('error', fail).once('exit', onExit);
      proc.stderr!.setEncoding('utf8').on('data', onData);
    });
    const [port, routePort, monitorPort] = ports;
    this.ports[i] = port;
    this.nodes[i] = { url: `nats://127.0.0.1:${port}`, port, routePort, monitorPort, pid: proc.pid!, proc };
  }

  /** Waits until every running node has a route to every other one. */
  private async meshed(): Promise<void> {
    const running = this.nodes.filter((n): n is NatsNode => Boolean(n));
    const ok = await until(async () => {
      const counts = await Promise.all(running.map(async (n) => (await monitor(n, 'routez')).num_routes as number));
      return counts.every((c) => c >= running.length - 1);
    }, START_TIMEOUT_MS);
    if (!ok) throw new Error(`the NATS cluster did not form its routes within ${START_TIMEOUT_MS} ms`);
  }
}

/** Signals a process and waits for it to exit (SIGKILL after a while). */
async function exit(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
