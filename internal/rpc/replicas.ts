// A service run as several processes, reached through a comma list of addresses
// (`127.0.0.1:7001,127.0.0.1:7011` or `unix:///a.sock,unix:///b.sock`): one
// client per address, each with its own channel and multiplex, and each
// address's health followed on a grpc.health.v1 Watch stream over that same
// channel, so a process that dies or says NOT_SERVING is left at once.
//
// Calls go to the first address that serves, in the order given: the standby
// processes cost nothing, the gateway's answer caches keep hearing one process,
// and an operator spreads load by giving each client the list in another order
// (each gateway its own replica first). A call that fails UNAVAILABLE moves on to
// the next address when repeating it cannot do anything twice: methods the proto
// marks free of side effects always, others only when the peer says it did not
// run the call (a stopping server refusing it) — never a write that may have
// landed. With no address serving a call fails UNAVAILABLE at once.
import * as grpc from '@grpc/grpc-js';
import { addressesOf, clientOptions, dispatch, healthClient, type UnaryMethod } from './client.js';
import { serviceError, UNPROCESSED_TRAILER } from './multiplex.js';

/** unknown: its health has not answered yet (a first connection under way). */
type Health = 'unknown' | 'serving' | 'down';

interface Member {
  address: string;
  client: grpc.Client;
  health: Health;
  watch?: grpc.ClientReadableStream<{ status?: string }>;
}

/** A failed health stream is opened again this long after; a connection attempt is no dearer than that. */
const HEALTH_RETRY_MS = 500;
/** The longest a call waits for addresses whose health is not known yet (a client just made). */
const UNKNOWN_WAIT_MS = 1_000;

/** A method the proto marks free of side effects (idempotency_level): repeating it elsewhere is always safe. */
function repeatable(method: UnaryMethod): boolean {
  const level = (method as { options?: { idempotency_level?: string } }).options?.idempotency_level;
  return level === 'NO_SIDE_EFFECTS' || level === 'IDEMPOTENT';
}

/** How the calls of a peer that went away fail: its connection dropped, or its streams reset. */
const GONE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED]);

/** Whether a call that failed with err may go to another address. */
function retriable(method: UnaryMethod, err: unknown): boolean {
  const e = err as grpc.ServiceError;
  if (!GONE.has(e?.code)) return false;
  return repeatable(method) || e.metadata?.get(UNPROCESSED_TRAILER)[0] !== undefined;
}

/** A client's channel, for another client of the same server to call on. */
const channelOf = (client: grpc.Client) => client.getChannel() as grpc.ClientOptions['channelOverride'];

const isReady = (client: grpc.Client): boolean => client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;

export class ReplicaSet {
  readonly members: Member[];
  private readonly listeners = new Set<() => void>();
  private closed = false;

  constructor(clients: Array<{ address: string; client: grpc.Client }>, private readonly service: string) {
    this.members = clients.map(({ address, client }) => ({ address, client, health: 'unknown' }));
    for (const member of this.members) this.follow(member);
  }

  /** Some address serves. */
  get serving(): boolean {
    return this.members.some((m) => m.health === 'serving');
  }

  /** Called whenever an address's health changes. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The client of the first address that serves over a connected channel (one not connected now was never sent
   * anything), skipping those tried; undefined when there is none. */
  pick(tried?: ReadonlySet<Member>): Member | undefined {
    return this.members.find((m) => m.health === 'serving' && !tried?.has(m) && isReady(m.client));
  }

  async unary<Res>(method: UnaryMethod, req: object, timeoutMs: number): Promise<Res> {
    const deadline = Date.now() + timeoutMs;
    const tried = new Set<Member>();
    let failure: unknown;
    for (;;) {
      const member = this.pick(tried) ?? await this.known(tried, deadline);
      if (!member) throw failure ?? this.unavailable();
      tried.add(member);
      try {
        return await dispatch<Res>(member.client, method, req, Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (!retriable(method, err)) throw err;
        failure = err;
      }
    }
  }

  /** The client a stream goes to: the one a unary call would use, else the first (whose own failure then tells). */
  streamClient(): grpc.Client {
    return (this.pick() ?? this.members[0]).client;
  }

  close(): void {
    this.closed = true;
    for (const m of this.members) {
      m.watch?.cancel();
      m.client.close();
    }
  }

  /** Once no untried address's health is unknown (or the wait is over), the one to call, if any. */
  private async known(tried: ReadonlySet<Member>, deadline: number): Promise<Member | undefined> {
    const until = Math.min(deadline, Date.now() + UNKNOWN_WAIT_MS);
    while (this.members.some((m) => m.health === 'unknown' && !tried.has(m)) && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, until - Date.now());
        const off = this.onChange(done);
        function done() { clearTimeout(timer); off(); resolve(); }
      });
      const member = this.pick(tried);
      if (member) return member;
    }
    return this.pick(tried);
  }

  private unavailable(): grpc.ServiceError {
    const addresses = this.members.map((m) => m.address).join(', ');
    return serviceError(grpc.status.UNAVAILABLE, `no replica of ${this.service} is serving (${addresses})`);
  }

  private set(member: Member, health: Health): void {
    if (member.health === health) return;
    member.health = health;
    for (const listener of [...this.listeners]) listener();
  }

  /** Follows the address's health on a Watch stream, opened again after it fails or says anything but SERVING (the
   * stream ends, so a server that stops is not held open by it). */
  private follow(member: Member): void {
    if (this.closed) return;
    const health = healthClient(member.address, channelOf(member.client));
    const watch = health.watch({ service: this.service }) as grpc.ClientReadableStream<{ status?: string }>;
    member.watch = watch;
    let over = false;
    const again = () => {
      if (over) return;
      over = true;
      watch.cancel();
      this.set(member, 'down');
      setTimeout(() => this.follow(member), HEALTH_RETRY_MS).unref();
    };
    watch.on('data', (res) => (res.status === 'SERVING' ? this.set(member, 'serving') : again()));
    watch.on('error', again);
    watch.on('end', again);
  }
}

const replicaSets = new WeakMap<grpc.Client, ReplicaSet>();

/** The replicas behind a client made by `replicated`, when it has several addresses. */
export const replicaSetOf = (client: grpc.Client): ReplicaSet | undefined => replicaSets.get(client);

/** A generated client's constructor, with its service definition. */
interface ServiceConstructor<C extends grpc.Client> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions): C;
  service: grpc.ServiceDefinition;
}

/** The full name of a service (`svc.storage.v1.Storage`), as servers report its health: read from a method's path. */
const serviceNameOf = (service: grpc.ServiceDefinition): string => Object.values(service)[0].path.split('/')[1];

/**
 * A client of the service at a comma list of addresses. With one address it is the plain generated client, as cheap
 * as ever. With several it is a generated client whose unary calls (through `unary`) and server streams go to a
 * serving replica; it closes them all.
 */
export function replicated<C extends grpc.Client>(Service: ServiceConstructor<C>, addresses: string): C {
  const list = addressesOf(addresses);
  const make = (address: string, options: grpc.ClientOptions = clientOptions) => new Service(address, grpc.credentials.createInsecure(), options);
  if (list.length <= 1) return make(list[0] ?? addresses);
  const replicas = new ReplicaSet(list.map((address) => ({ address, client: make(address) })), serviceNameOf(Service.service));
  // A client object of the service of its own, on the first address's channel, that names the replica set.
  const facade = make(list[0], { ...clientOptions, channelOverride: channelOf(replicas.members[0].client) });
  const own = facade as unknown as Record<string, unknown>;
  for (const [name, def] of Object.entries(Service.service)) {
    if (!def.responseStream) continue;
    const stream = (...args: unknown[]) => (replicas.streamClient() as unknown as Record<string, (...a: unknown[]) => unknown>)[name](...args);
    own[name] = stream;
    if (def.originalName) own[def.originalName] = stream;
  }
  facade.close = () => replicas.close();
  replicaSets.set(facade, replicas);
  return facade;
}
