// The API's figures beside etcd's, each with its ratio to a peer, and the targets
// they are held to with a pass/miss mark. Figures are printed, never asserted: a
// missed target does not fail the run.
import type { Measured } from './load.js';
import type { ApiFigures, EtcdFigures, WatchPhase } from './figures.js';
import { grid, num, ratio } from './table.js';
import { IDLE_WINDOW_MS } from './proc.js';

/** The order processes are shown in; any other process the cluster runs follows. */
const ORDER = ['gateway', 'authn', 'authz', 'admission', 'storage', 'controller-manager', 'nats-server'];
/** Every process the cluster ran (the idle phase saw each one). */
const processesOf = (api: ApiFigures): string[] => Object.keys(api.idle).sort((a, b) => rank(a) - rank(b));
const rank = (p: string) => (ORDER.includes(p) ? ORDER.indexOf(p) : ORDER.length);
/** Main-thread wake-ups per second above which an idle process is taken to poll faster than once a second. */
const IDLE_WAKEUPS_PER_SEC = 1.5;
const MIB = 1024 * 1024;

type Target = [target: string, figure: string, pass: boolean | undefined];
const mark = (pass: boolean | undefined): string => (pass === undefined ? '-' : pass ? 'pass' : 'MISS');

function sideBySide(api: ApiFigures, etcd: EtcdFigures | undefined): string {
  const rows: string[][] = [];
  for (const [op, peerOp] of [['create', 'put'], ['get', 'get']] as const) {
    for (const c of ['c1', 'c32'] as const) {
      const a = api[op][c];
      const e = etcd?.[peerOp][c];
      rows.push([op, c.slice(1), num(a.opsPerSec), num(a.p50Ms), num(a.p99Ms), num(a.cpuMsPerOp),
        peerOp, num(e?.opsPerSec), num(e?.p50Ms), num(e?.p99Ms), num(e?.cpuMsPerOp),
        ratio(a.opsPerSec, e?.opsPerSec), ratio(a.cpuMsPerOp, e?.cpuMsPerOp)]);
    }
  }
  const peer = etcd ? `etcd ${etcd.version} over gRPC, values of ${etcd.valueBytes} B` : 'etcd: not measured';
  return grid(`API (HTTPS, ConfigMaps of ~1 KB) beside ${peer}; CPU summed over every server process`,
    ['API', 'clients', 'ops/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'etcd', 'ops/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'ops/s vs etcd', 'CPU vs etcd'], rows);
}

function byProcess(api: ApiFigures): string {
  const rows: Array<[string, Measured | undefined]> = [
    ['create, 1 client', api.create.c1], ['create, 32 clients', api.create.c32], ['get, 1 client', api.get.c1], ['get, 32 clients', api.get.c32],
    ['list 10k, JSON', api.list?.json], ['list 10k, Protobuf', api.list?.protobuf],
  ];
  const processes = processesOf(api);
  const watch = (name: string, w: WatchPhase | undefined): string[] =>
    [name, num(w?.cpuMsPerWrite), ...processes.map((p) => num(w?.cpuMsPerWriteByProcess[p])), num(w ? w.clientCpuShare : undefined)];
  return grid('CPU ms per request by process (per list; per create with 1,000 watchers); client = the load generator itself',
    ['phase', 'sum', ...processes, 'client'], [
      ...rows.map(([name, m]) => [name, num(m?.cpuMsPerOp), ...processes.map((p) => num(m?.cpuMsPerOpByProcess[p])), num(m?.clientCpuMsPerOp)]),
      watch('watch, per create', api.watch?.alone),
      watch('watch + stalled, per create', api.watch?.withStalled),
    ]) + '\n(watch rows: client = share of one core the load generator used; near 1 it, not the server, may be what limits)';
}

function list(api: ApiFigures, etcd: EtcdFigures | undefined): string {
  const l = api.list;
  if (!l) return 'List: not measured';
  const e = etcd?.list;
  const row = (format: string, m: Measured) => [format, num(m.p50Ms), num(m.p99Ms), String(m.count), num(m.cpuMsPerOp),
    ratio(m.p50Ms, l.json.p50Ms), ratio(m.p50Ms, e?.p50Ms), ratio(m.cpuMsPerOp, e?.cpuMsPerOp)];
  return grid(`List of ${l.objects.toLocaleString('en-US')} ConfigMaps (~1 KB each), one client, beside an etcd range over as many keys`,
    ['format', 'ms per list p50', 'p99 ms', 'lists', 'CPU ms per list', 'time vs JSON', 'time vs etcd', 'CPU vs etcd'], [
      row('JSON', l.json), row('Protobuf', l.protobuf),
      ...(e ? [['etcd range', num(e.p50Ms), num(e.p99Ms), String(e.count), num(e.cpuMsPerOp), '', '', '']] : []),
    ]);
}

function watch(api: ApiFigures, etcd: EtcdFigures | undefined): string {
  const w = api.watch;
  if (!w) return 'Watch: not measured';
  const e = etcd?.watch;
  const row = (name: string, p: WatchPhase) => [name, num(p.achievedRate), ratio(p.achievedRate, w.targetRate), String(p.writes), String(p.failedWrites),
    num(p.p50Ms), num(p.p99Ms), String(p.lost), num(p.cpuMsPerWrite), ratio(p.achievedRate, e?.achievedRate), ratio(p.p99Ms, e?.p99Ms), ratio(p.cpuMsPerWrite, e?.cpuMsPerWrite)];
  return grid(`Watch: ${w.watchers.toLocaleString('en-US')} watchers of one namespace, a writer targeting ${w.targetRate} creates/s `
    + `(events of ~${Math.round(w.eventBytes)} B); delivery = commit → read by a watcher`,
  ['phase', 'writes/s', 'vs target', 'writes', 'failed', 'delivery p50 ms', 'p99 ms', 'lost', 'CPU ms/write', 'writes/s vs etcd', 'p99 vs etcd', 'CPU vs etcd'],
  [row('API, watchers alone', w.alone), row('API + 1 stalled watcher', w.withStalled), ...(e ? [row(`etcd, ${e.watchers} watch streams`, e).slice(0, 9)] : [])])
    + '\nAPI: commit = the event seen on NATS (seen for '
    + `${w.alone.commitsSeen + w.withStalled.commitsSeen} of ${w.alone.writes + w.withStalled.writes} writes; the others dated by their response); `
    + 'etcd: commit = the put\'s response or the first watcher\'s event, whichever came first (a lower bound)'
    + `\nstalled watcher (all ConfigMaps from resourceVersion 0, never read): ${w.withStalled.stalledEnded}; `
    + `gateway RSS grew ${num(w.withStalled.gatewayRssGrowthMb)} MiB meanwhile; watchers the server ended: ${w.endedWatchers}`;
}

function memory(api: ApiFigures): string {
  const m = api.memory;
  if (!m) return 'Memory: not measured';
  const scale = 100_000 / m.objects;
  const growth = (p: string) => (m.afterMb[p] - m.beforeMb[p]) * scale;
  const processes = processesOf(api);
  const sum = processes.reduce((s, p) => s + (growth(p) || 0), 0);
  const jsonMb = (m.jsonBytes * scale) / MIB;
  const rows = processes.map((p) => [p, num(m.beforeMb[p]), num(m.afterMb[p]), num(growth(p)), ratio(growth(p), jsonMb)]);
  return grid(`Memory: ${m.objects.toLocaleString('en-US')} ConfigMaps of ~${Math.round(m.jsonBytes / m.objects)} B JSON `
    + `(${num(m.jsonBytes / MIB)} MiB) written through storage in ${num(m.writeSeconds)} s, after a warm-up of ${m.warmUpWrites.toLocaleString('en-US')} updates${m.settled ? '' : ' (processes still busy when measured)'}; `
    + `growth per 100k${m.objects < 100_000 ? ' (scaled: the write budget ran out)' : ''}`,
  ['process', 'RSS before MiB', 'after MiB', 'growth MiB', 'vs JSON size'], [...rows, ['sum', '', '', num(sum), ratio(sum, jsonMb)]])
    + '\n(RSS holds garbage not yet collected: a process that collected meanwhile can show less after than before)';
}

function idle(api: ApiFigures): string {
  return grid(`Idle (${IDLE_WINDOW_MS / 1000} s, no requests): CPU, and how often the main thread woke up`,
    ['process', 'CPU ms/s', 'wake-ups/s'], processesOf(api).map((p) => [p, num(api.idle[p].cpuMsPerSec), num(api.idle[p].wakeupsPerSec)]));
}

function targets(api: ApiFigures, etcd: EtcdFigures | undefined): Target[] {
  const c = api.create.c32;
  const g = api.get.c32;
  const l = api.list;
  const w = api.watch;
  const m = api.memory;
  const memSum = m && processesOf(api).reduce((s, p) => s + ((m.afterMb[p] - m.beforeMb[p]) || 0), 0) * MIB;
  // nats-server is not ours: its own timers are left out of the idle mark.
  const pollers = Object.entries(api.idle).filter(([p, i]) => p !== 'nats-server' && i.wakeupsPerSec > IDLE_WAKEUPS_PER_SEC).map(([p]) => p);
  const lt = (a: number | undefined, b: number) => (a === undefined || !Number.isFinite(a) ? undefined : a <= b);
  return [
    ['create, 32 clients: >= 1,500/s', `${num(c.opsPerSec)}/s`, c.opsPerSec >= 1500],
    ['create, 32 clients: <= 1.0 ms CPU/req', `${num(c.cpuMsPerOp)} ms`, lt(c.cpuMsPerOp, 1.0)],
    ['create, 32 clients: p99 <= 50 ms', `${num(c.p99Ms)} ms`, lt(c.p99Ms, 50)],
    ['create, 32 clients: >= 0.6x etcd put', ratio(c.opsPerSec, etcd?.put.c32.opsPerSec), etcd ? c.opsPerSec >= 0.6 * etcd.put.c32.opsPerSec : undefined],
    ['get, 32 clients: >= 6,000/s', `${num(g.opsPerSec)}/s`, g.opsPerSec >= 6000],
    ['get, 32 clients: >= 2x etcd get', ratio(g.opsPerSec, etcd?.get.c32.opsPerSec), etcd ? g.opsPerSec >= 2 * etcd.get.c32.opsPerSec : undefined],
    ['get, 32 clients: <= 0.25 ms CPU/req', `${num(g.cpuMsPerOp)} ms`, lt(g.cpuMsPerOp, 0.25)],
    ['list 10k as JSON: <= 60 ms', `${num(l?.json.p50Ms)} ms`, lt(l?.json.p50Ms, 60)],
    ['list 10k: Protobuf faster than JSON', l ? `${num(l.protobuf.p50Ms)} vs ${num(l.json.p50Ms)} ms (CPU ${num(l.protobuf.cpuMsPerOp)} vs ${num(l.json.cpuMsPerOp)})` : '-', l && l.protobuf.p50Ms < l.json.p50Ms],
    ['watch: the writer holds 500 creates/s', w ? `${num(w.alone.achievedRate)}/s (etcd ${num(etcd?.watch.achievedRate)}/s)` : '-', w && w.alone.achievedRate >= 0.95 * w.targetRate],
    ['watch: delivery p99 <= 50 ms', `${num(w?.alone.p99Ms)} ms (etcd ${num(etcd?.watch.p99Ms)} ms)`, lt(w?.alone.p99Ms, 50)],
    ['watch: no event lost', w ? `${w.alone.lost + w.withStalled.lost} lost` : '-', w && w.alone.lost + w.withStalled.lost === 0],
    ['watch: a stalled watcher is ended (410)', w ? w.withStalled.stalledEnded : '-', w && /code 410/.test(w.withStalled.stalledEnded)],
    ['watch: ... and the others keep p99 <= 50 ms', `${num(w?.withStalled.p99Ms)} ms`, lt(w?.withStalled.p99Ms, 50)],
    ['100k ConfigMaps: memory growth <= 3x JSON', m && memSum !== undefined ? ratio(memSum, m.jsonBytes) : '-', m && memSum !== undefined ? memSum <= 3 * m.jsonBytes : undefined],
    [`idle: no process wakes > ${IDLE_WAKEUPS_PER_SEC}/s`, pollers.length ? pollers.join(', ') : 'none does', pollers.length === 0],
  ];
}

export function report(api: ApiFigures, etcd: EtcdFigures | undefined): string {
  const t = targets(api, etcd);
  return [
    sideBySide(api, etcd), byProcess(api), list(api, etcd), watch(api, etcd), memory(api), idle(api),
    grid('Targets (benchmarks, not tests: a miss is reported, the run does not fail)', ['target', 'figure', 'mark'], t.map(([a, b, p]) => [a, b, mark(p)]))
      + `\n${t.filter(([, , p]) => p === true).length} of ${t.length} targets met`,
    ...(api.problems.length ? [`Problems:\n${api.problems.join('\n')}`] : []),
  ].join('\n\n');
}
