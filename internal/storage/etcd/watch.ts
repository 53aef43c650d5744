// One etcd watch on a stream of its own: created within a deadline, its
// responses read with the stream's flow control, ended by the caller, an abort
// signal or etcd (a compacted start revision is the storage `compacted` error).
import { RpcError, grpc, isServiceError } from '../../rpc/index.js';
import { outOfRange } from '../checks.js';
import { etcdError, type EtcdClient, type EtcdEvent, type WatchResponse } from './client.js';

const CREATE_DEADLINE_MS = 5000;

export interface WatchRange { key: Buffer; rangeEnd: Buffer; startRevision: number }

export interface OpenWatch {
  /** The etcd revision when the watch was created. */
  revision: number;
  /** The events, a response at a time, in revision order. */
  responses: AsyncGenerator<EtcdEvent[]>;
}

const lost = (details: string): RpcError => new RpcError(grpc.status.UNAVAILABLE, `etcd: ${details}`);
const compacted = (start: number, oldest: number) =>
  outOfRange('compacted', `revision ${start - 1} is compacted (oldest watchable: ${oldest})`);

/** Opens a watch (with previous values) and waits for etcd to create it. */
export async function openWatch(client: EtcdClient, range: WatchRange, signal?: AbortSignal): Promise<OpenWatch> {
  const call = client.watch();
  const abort = (): void => call.cancel();
  signal?.addEventListener('abort', abort);
  const done = (): void => {
    signal?.removeEventListener('abort', abort);
    call.cancel();
  };
  const iterator = call[Symbol.asyncIterator]() as AsyncIterator<WatchResponse>;
  let timer: NodeJS.Timeout | undefined;
  try {
    call.write({ createRequest: { ...range, prevKv: true } });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(lost('no answer to a watch')), CREATE_DEADLINE_MS);
    });
    const first = await Promise.race([iterator.next(), timeout]);
    if (first.done) throw lost('the watch ended unanswered');
    const res = first.value;
    if (res.compactRevision > 0) throw compacted(range.startRevision, res.compactRevision);
    if (!res.created || res.canceled) throw lost(`watch not created: ${res.cancelReason}`);
    return { revision: res.header.revision, responses: follow(iterator, range, done, signal) };
  } catch (err) {
    done();
    throw signal?.aborted ? err : etcdError(err);
  } finally {
    clearTimeout(timer);
  }
}

async function* follow(iterator: AsyncIterator<WatchResponse>, range: WatchRange, done: () => void, signal?: AbortSignal): AsyncGenerator<EtcdEvent[]> {
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw lost('the watch ended');
      const res = next.value;
      if (res.compactRevision > 0) throw compacted(range.startRevision, res.compactRevision);
      if (res.canceled) throw lost(`the watch was canceled: ${res.cancelReason}`);
      if (res.events.length > 0) yield res.events;
    }
  } catch (err) {
    if (signal?.aborted && isServiceError(err) && err.code === grpc.status.CANCELLED) return;
    throw etcdError(err);
  } finally {
    done();
  }
}
