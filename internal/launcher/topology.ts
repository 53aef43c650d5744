// How many processes of each kind the launcher runs: replicas of every service,
// nodes of the local NATS, members of the local etcd; and the names they run under.
import { FlagError } from '../config/flags.js';
import type { ServiceName } from '../config/services.js';

export interface Topology {
  /** Processes of each stateless service (and of storage on etcd3). */
  replicas: number;
  /** Storage processes: several only on etcd3, LevelDB having one writer. */
  storageReplicas: number;
  /** Local nats-server nodes; 0 when --nats-url names a NATS of the user's. */
  natsNodes: number;
  /** Local etcd members; 0 for none. */
  etcdMembers: number;
  /** The client port of the first local etcd member; 0: free ports. */
  etcdPort: number;
}

export const STORAGE_BACKEND_FLAG = 'storage-backend';
export const ETCD3 = 'etcd3';

/** The value of an integer launcher flag (`flag` applies its default), at least `min`. */
function count(flag: (name: string) => string, name: string, min: number): number {
  const n = Number(flag(name));
  if (!Number.isInteger(n) || n < min) throw new FlagError(`invalid value "${flag(name)}" for --${name}: an integer of at least ${min}`);
  return n;
}

/** Reads and checks the launcher's topology flags against the flags given to storage and the gRPC services. */
export function readTopology(flag: (name: string) => string, storage: Map<string, string>): Topology {
  const replicas = count(flag, 'replicas', 1);
  const etcdMembers = count(flag, 'etcd-members', 0);
  const natsNodes = count(flag, 'nats-nodes', 1);
  const backend = storage.get(STORAGE_BACKEND_FLAG);
  if (etcdMembers > 0 && storage.has('etcd-servers')) throw new FlagError('--etcd-members starts the etcd storage uses: give either it or --etcd-servers');
  if (etcdMembers > 0 && backend !== undefined && backend !== ETCD3) throw new FlagError(`--etcd-members needs --${STORAGE_BACKEND_FLAG}=${ETCD3} (the default with it)`);
  if (natsNodes > 1 && storage.has('nats-url')) throw new FlagError('--nats-nodes starts the NATS the services use: give either it or --nats-url');
  if (replicas > 1 && storage.has('listen')) throw new FlagError('--listen names one address: with --replicas each gRPC service replica listens on its own Unix socket under the data dir');
  const onEtcd = etcdMembers > 0 || backend === ETCD3;
  return { replicas, storageReplicas: onEtcd ? replicas : 1, natsNodes: storage.has('nats-url') ? 0 : natsNodes, etcdMembers, etcdPort: count(flag, 'etcd-port', 0) };
}

export const replicasOf = (topology: Topology, service: ServiceName): number => (service === 'storage' ? topology.storageReplicas : topology.replicas);

/** A process's name in the launcher's output: the service's, numbered from 1 when it has several. */
export const replicaName = (base: string, index: number, count: number): string => (count > 1 ? `${base}-${index + 1}` : base);
