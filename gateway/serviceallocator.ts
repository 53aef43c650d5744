// Cluster IPs and node ports of Services. Each value a service holds is a record
// created only when absent, so two services never get the same one, whichever
// gateway serves them: an IPAddress object (networking.svc.io/v1) per cluster IP,
// as the platform publishes them, and an internal record per node port. A value
// goes back to the pool when its service is deleted or stops using it; a sweep at
// start and after every lost watch removes records a crash left behind.
import { randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { newUid, nowTimestamp } from '../internal/apimachinery/meta.js';
import { invalid as invalidObject, type StatusCause } from '../internal/apimachinery/status.js';
import {
  API_SERVICE, SERVICE_NAME_LABEL, IPADDRESS_FAMILY_LABEL, IPADDRESS_MANAGED_BY_LABEL, IP_ALLOCATOR, NAMESPACE_DEFAULT, SERVICE_CIDR_DEFAULT_NAME, group,
} from '../internal/names/index.js';
import { invalid } from '../internal/registry/causes.js';
import type { Registry } from '../internal/registry/index.js';
import { NODE_PORT_RANGE, SERVICE_CIDR, usesNodePorts } from '../internal/registry/kinds/core-services.js';
import { addressAt, isIP, isIPv4, parseCidr, sizeOf } from '../internal/registry/net.js';
import { asList, asObj, objects, specOf, type Obj } from '../internal/registry/values.js';
import type { KeyValue, StorageClient, StorageEvent } from '../internal/storage/client.js';
import { collectionPrefix, objectKey } from '../internal/storage/keys.js';
import { createStoredOnce } from '../internal/storage/objects.js';
import type { WatchHub } from './hub.js';
import { decodeStored, encodeStored } from './objects.js';

const NETWORKING = group('networking');
const SERVICES_PREFIX = collectionPrefix('', 'services');
const IP_PREFIX = collectionPrefix(NETWORKING, 'ipaddresses');
/** Node ports are not an API resource: their records live beside the services, under their own prefix. */
const NODE_PORT_PREFIX = collectionPrefix('', 'servicenodeports');
/** Addresses below this offset are only handed out when asked for by name, as the platform reserves them. */
const STATIC_BAND = 256n;
/** Random draws before a scan for the first free value. */
const RANDOM_DRAWS = 32;
/** A record younger than this may belong to a create still in flight; the sweep leaves it. */
const SWEEP_GRACE_MS = 60_000;
const RETRY_MS = 1000;

const range = parseCidr(SERVICE_CIDR)!;
const ipKey = (ip: string) => objectKey(NETWORKING, 'ipaddresses', '', ip);
const nodePortKey = (port: number) => `${NODE_PORT_PREFIX}/${port}`;

/** What a service holds: its cluster IPs (IPv4 of the service range) and node ports. */
interface Held { ips: string[]; nodePorts: number[] }

interface Owner { namespace: string; name: string }

/** Undoes the claims of one write that did not happen. */
export type Release = () => Promise<void>;

/** Gives an object of one kind the values of shared pools it needs (`old`: the stored object of an update). */
export interface Allocator {
  allocate(obj: ApiObject, old: ApiObject | undefined, dryRun: boolean): Promise<Release>;
}


function inRange(ip: string): boolean {
  const cidr = parseCidr(`${ip}/32`);
  if (!cidr || cidr.family !== 4) return false;
  const offset = cidr.addr - range.addr;
  return offset > 0n && offset < sizeOf(range) - 1n;
}

function held(svc: ApiObject | undefined): Held {
  const spec = specOf(svc);
  if (!svc || spec.type === 'ExternalName') return { ips: [], nodePorts: [] };
  const ips = asList(spec.clusterIPs).filter((ip): ip is string => typeof ip === 'string' && inRange(ip));
  const nodePorts = usesNodePorts(spec) ? objects(spec.ports).map((p) => p.nodePort).filter((p): p is number => typeof p === 'number' && p > 0) : [];
  return { ips, nodePorts };
}

const ownerOf = (svc: ApiObject): Owner => ({ namespace: svc.metadata!.namespace!, name: svc.metadata!.name! });

function ipRecord(ip: string, owner: Owner): ApiObject {
  return {
    apiVersion: `${NETWORKING}/v1`, kind: 'IPAddress',
    metadata: {
      name: ip, uid: newUid(), creationTimestamp: nowTimestamp(), generation: 1,
      labels: { [IPADDRESS_FAMILY_LABEL]: 'IPv4', [IPADDRESS_MANAGED_BY_LABEL]: IP_ALLOCATOR },
    },
    spec: { parentRef: { group: '', resource: 'services', ...owner } },
  };
}

function nodePortRecord(owner: Owner): ApiObject {
  return { metadata: { uid: newUid(), creationTimestamp: nowTimestamp() }, spec: { parentRef: { resource: 'services', ...owner } } };
}

const recordOwner = (record: ApiObject): Owner | undefined => asObj(asObj(record.spec)?.parentRef) as Owner | undefined;
const sameOwner = (a: Owner | undefined, b: Owner) => a?.namespace === b.namespace && a?.name === b.name;

/** One kind of value: how its records are keyed and made, and the pool new values come from. */
interface Pool<T> {
  key(value: T): string;
  record(value: T, owner: Owner): ApiObject;
  size: number;
  /** The n-th value of the pool (0 <= n < size); the first `reserved` only on request. */
  at(n: number): T;
  reserved: number;
}

const IP_POOL: Pool<string> = {
  key: ipKey, record: ipRecord,
  size: Number(sizeOf(range) - 2n), at: (n) => addressAt(range, BigInt(n) + 1n), reserved: Number(STATIC_BAND),
};

const NODE_PORT_POOL: Pool<number> = {
  key: nodePortKey, record: (_port, owner) => nodePortRecord(owner),
  size: NODE_PORT_RANGE.max - NODE_PORT_RANGE.min + 1, at: (n) => NODE_PORT_RANGE.min + n, reserved: 0,
};

export class ServiceAllocator implements Allocator {
  constructor(private readonly storage: StorageClient, private readonly registry: Registry) {}

  /**
   * Gives a service the cluster IP and node ports it lacks and claims the ones it
   * newly asks for (compared with `old`, the stored service of an update). A
   * dry run only checks. Throws 422 for a value that is taken or out of range.
   */
  async allocate(svc: ApiObject, old: ApiObject | undefined, dryRun: boolean): Promise<Release> {
    const spec = specOf(svc);
    const claimed: string[] = [];
    const release: Release = async () => {
      await Promise.all(claimed.map((key) => this.storage.deleteIfAt(key)));
    };
    if (spec.type === 'ExternalName') return release;
    const owner = ownerOf(svc);
    const before = held(old);
    try {
      await this.allocateIP(spec, owner, before, dryRun, claimed);
      if (usesNodePorts(spec)) await this.allocateNodePorts(spec, owner, before, dryRun, claimed);
    } catch (err) {
      await release();
      throw err;
    }
    return release;
  }

  private async allocateIP(spec: Obj, owner: Owner, before: Held, dryRun: boolean, claimed: string[]): Promise<void> {
    // Allocation runs before validation: a value of the wrong type is left for it to report.
    const first = asList(spec.clusterIPs)[0] ?? spec.clusterIP;
    if (first !== undefined && first !== '' && typeof first !== 'string') return;
    const asked = (first as string | undefined) || undefined;
    if (asked === 'None') return;
    if (asked && before.ips.includes(asked)) return;
    if (!asked) {
      const ip = await this.draw(IP_POOL, owner, dryRun, claimed);
      if (ip === undefined) throw full(owner, 'spec.clusterIPs', `failed to allocate a serviceIP: range is full`);
      spec.clusterIP = ip;
      spec.clusterIPs = [ip, ...asList(spec.clusterIPs).slice(1)];
      return;
    }
    const at = 'spec.clusterIPs[0]';
    // The service network is IPv4 only; a malformed address is validation's to report.
    if (!isIPv4(asked)) {
      if (isIP(asked)) throw refused(owner, 'spec.ipFamilies[0]', 'IPv6', 'not configured on this cluster');
      return;
    }
    if (!inRange(asked)) {
      throw refused(owner, at, asked, `failed to allocate IP ${asked}: provided IP (${asked}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`);
    }
    if (!(await this.claim(IP_POOL, asked, owner, dryRun, claimed))) {
      throw refused(owner, at, asked, `failed to allocate IP ${asked}: provided IP is already allocated`);
    }
  }

  private async allocateNodePorts(spec: Obj, owner: Owner, before: Held, dryRun: boolean, claimed: string[]): Promise<void> {
    const ports = objects(spec.ports);
    for (const [i, p] of ports.entries()) {
      const at = `spec.ports[${i}].nodePort`;
      // 0 or absent asks for one; anything but a whole number is validation's to report.
      if (p.nodePort !== undefined && p.nodePort !== 0 && !Number.isInteger(p.nodePort)) continue;
      const asked = p.nodePort ? p.nodePort as number : undefined;
      if (asked !== undefined && before.nodePorts.includes(asked)) continue;
      if (asked === undefined) {
        const port = await this.draw(NODE_PORT_POOL, owner, dryRun, claimed);
        if (port === undefined) throw full(owner, at, 'failed to allocate a nodePort: range is full');
        p.nodePort = port;
        continue;
      }
      if (asked < NODE_PORT_RANGE.min || asked > NODE_PORT_RANGE.max) {
        throw refused(owner, at, asked, `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}`);
      }
      // Two ports of one service may share a node port (TCP and UDP of one number).
      const sharedWithinService = ports.slice(0, i).some((o) => o.nodePort === asked);
      if (!sharedWithinService && !(await this.claim(NODE_PORT_POOL, asked, owner, dryRun, claimed))) {
        throw refused(owner, at, asked, 'provided port is already allocated');
      }
    }
  }

  /** Creates the record of `value` unless it exists; false when another holds it. */
  private async claim<T>(pool: Pool<T>, value: T, owner: Owner, dryRun: boolean, claimed: string[]): Promise<boolean> {
    const key = pool.key(value);
    if (claimed.includes(key)) return false;
    if (dryRun) return (await this.storage.find(key)) === undefined;
    const record = pool.record(value, owner);
    if (!(await createStoredOnce(this.storage, key, record))) return false;
    claimed.push(key);
    return true;
  }

  /** A free value: random draws from the dynamic part of the pool, then a scan of the whole pool. */
  private async draw<T>(pool: Pool<T>, owner: Owner, dryRun: boolean, claimed: string[]): Promise<T | undefined> {
    const dynamic = pool.size - pool.reserved;
    for (let i = 0; i < RANDOM_DRAWS && dynamic > 0; i++) {
      const value = pool.at(pool.reserved + randomInt(dynamic));
      if (await this.claim(pool, value, owner, dryRun, claimed)) return value;
    }
    for (let n = pool.reserved; n < pool.size + pool.reserved; n++) {
      const value = pool.at(n % pool.size);
      if (await this.claim(pool, value, owner, dryRun, claimed)) return value;
    }
    return undefined;
  }

  /**
   * The default ServiceCIDR, and the `kubernetes` service in `default` on the
   * range's first address, with the endpoints of the API (`address:port`).
   */
  async ensureDefaults(address: string, apiPort: number): Promise<void> {
    await this.ensureServiceCidr();
    await this.ensureApiEndpoints(address, apiPort);
    await this.ensureApiService(apiPort);
  }

  private async ensureServiceCidr(): Promise<void> {
    const def = this.registry.lookup(NETWORKING, 'v1', 'servicecidrs');
    if (!def) return;
    const cidr: ApiObject = {
      apiVersion: `${NETWORKING}/v1`, kind: 'ServiceCIDR',
      metadata: { name: SERVICE_CIDR_DEFAULT_NAME, uid: newUid(), creationTimestamp: nowTimestamp() },
      spec: { cidrs: [SERVICE_CIDR] },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: '', message: '', lastTransitionTime: nowTimestamp() }] },
    };
    def.prepareForCreate?.(cidr);
    await createStoredOnce(this.storage, objectKey(NETWORKING, 'servicecidrs', '', SERVICE_CIDR_DEFAULT_NAME), cidr);
  }

  /** An object the server keeps for itself: created when absent, its `fields` brought back when they differ. */
  private async keepCurrent(key: string, obj: ApiObject, fields: readonly string[]): Promise<void> {
    const kv = await this.storage.find(key);
    if (!kv) {
      await createStoredOnce(this.storage, key, obj);
      return;
    }
    const stored = decodeStored(kv);
    if (fields.every((f) => isDeepStrictEqual(stored[f], obj[f]))) return;
    for (const f of fields) stored[f] = obj[f];
    await this.storage.updateIfAt(key, encodeStored(stored), kv.modRevision);
  }

  /** The `kubernetes` service on the range's first address, its port leading to the API's (which a restart may change). */
  private async ensureApiService(apiPort: number): Promise<void> {
    const svcKey = objectKey('', 'services', NAMESPACE_DEFAULT, API_SERVICE);
    const ip = addressAt(range, 1n);
    const svc: ApiObject = {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: API_SERVICE, namespace: NAMESPACE_DEFAULT, uid: newUid(), creationTimestamp: nowTimestamp(), labels: { component: 'apiserver' } },
      spec: {
        type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], sessionAffinity: 'None',
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: apiPort }],
      },
    };
    const def = this.registry.lookup('', 'v1', 'services')!;
    def.prepareForCreate?.(svc);
    if (!(await this.storage.find(svcKey))) await this.claim(IP_POOL, ip, ownerOf(svc), false, []);
    await this.keepCurrent(svcKey, svc, ['spec']);
  }

  /** The Endpoints and EndpointSlice of the `kubernetes` service: where the API answers (the last gateway started). */
  private async ensureApiEndpoints(address: string, port: number): Promise<void> {
    const meta = (labels: Record<string, string>) => ({ name: API_SERVICE, namespace: NAMESPACE_DEFAULT, uid: newUid(), creationTimestamp: nowTimestamp(), labels });
    const endpoints: ApiObject = {
      apiVersion: 'v1', kind: 'Endpoints', metadata: meta({}),
      subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    };
    const discovery = group('discovery');
    const slice: ApiObject = {
      apiVersion: `${discovery}/v1`, kind: 'EndpointSlice', metadata: meta({ [SERVICE_NAME_LABEL.own]: API_SERVICE }),
      addressType: isIPv4(address) ? 'IPv4' : 'IPv6',
      endpoints: [{ addresses: [address], conditions: { ready: true, serving: true, terminating: false } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    };
    await this.keepCurrent(objectKey('', 'endpoints', NAMESPACE_DEFAULT, API_SERVICE), endpoints, ['subsets']);
    await this.keepCurrent(objectKey(discovery, 'endpointslices', NAMESPACE_DEFAULT, API_SERVICE), slice, ['addressType', 'endpoints', 'ports']);
  }

  /** Releases what deleted and changed services let go of, after sweeping what is left over. */
  async start(hub: WatchHub): Promise<void> {
    const follow = () => hub.register(SERVICES_PREFIX, {
      onEvent: (ev: StorageEvent) => { void this.onChange(ev).catch((err) => console.error(`service allocator: ${(err as Error).message}`)); },
      onFail: () => setTimeout(() => { follow(); void this.sweep(); }, RETRY_MS).unref(),
    });
    follow();
    await this.sweep();
  }

  private async onChange(ev: StorageEvent): Promise<void> {
    const now = ev.type === 'PUT' ? decodeStored(ev.kv!) : undefined;
    const prev = ev.type === 'DELETE' ? ev.kv : ev.prevKv;
    if (!prev) return;
    const was = decodeStored(prev);
    const kept = held(now);
    const { ips, nodePorts } = held(was);
    const owner = ownerOf(was);
    await Promise.all([
      ...ips.filter((ip) => !kept.ips.includes(ip)).map((ip) => this.releaseUnused(ipKey(ip), owner)),
      ...nodePorts.filter((p) => !kept.nodePorts.includes(p)).map((p) => this.releaseUnused(nodePortKey(p), owner)),
    ]);
  }

  /** Deletes a record of `owner` unless the service of that name (perhaps created anew) still uses its value. */
  private async releaseUnused(key: string, owner: Owner, olderThan?: number): Promise<void> {
    const record = await this.storage.find(key);
    if (!record) return;
    const obj = decodeStored(record);
    if (!sameOwner(recordOwner(obj), owner)) return;
    if (olderThan !== undefined && Date.parse(obj.metadata?.creationTimestamp ?? '') > olderThan) return;
    // Only a service known to be gone (not one storage could not answer for) lets go of its values.
    const current = await this.storage.find(objectKey('', 'services', owner.namespace, owner.name));
    const uses = held(current ? decodeStored(current) : undefined);
    const value = key.slice(key.lastIndexOf('/') + 1);
    if (uses.ips.includes(value) || uses.nodePorts.includes(Number(value))) return;
    await this.storage.deleteIfAt(key, record.modRevision);
  }

  /** Records whose service is gone, or no longer uses their value, once past the grace of an in-flight create. */
  private async sweep(): Promise<void> {
    const olderThan = Date.now() - SWEEP_GRACE_MS;
    for (const prefix of [IP_PREFIX, NODE_PORT_PREFIX]) {
      const page = await this.storage.list(prefix).catch(() => undefined);
      for (const kv of page?.items ?? []) await this.sweepOne(kv, olderThan);
    }
  }

  private async sweepOne(kv: KeyValue, olderThan: number): Promise<void> {
    const obj = decodeStored(kv);
    const owner = recordOwner(obj);
    if (obj.metadata?.labels?.[IPADDRESS_MANAGED_BY_LABEL] === undefined && kv.key.startsWith(IP_PREFIX)) return;
    if (owner) await this.releaseUnused(kv.key, owner, olderThan).catch(() => undefined);
  }
}

function refused(owner: Owner, field: string, value: unknown, detail: string) {
  return invalidObject('Service', { group: '', resource: 'services' }, owner.name, [invalid(field, value, detail)]);
}

function full(owner: Owner, field: string, message: string) {
  const cause: StatusCause = { reason: 'FieldValueInvalid', message, field };
  return invalidObject('Service', { group: '', resource: 'services' }, owner.name, [cause]);
}
