// The Storage gRPC service over a store.
import { RpcError, grpc, type Handlers } from '../rpc/index.js';
import type { StorageBackend } from './backend.js';
import type { GetRequest__Output as GetRequest } from '../rpc/gen/svc/storage/v1/GetRequest.js';
import type { ListRequest__Output as ListRequest } from '../rpc/gen/svc/storage/v1/ListRequest.js';
import type { CreateRequest__Output as CreateRequest } from '../rpc/gen/svc/storage/v1/CreateRequest.js';
import type { UpdateRequest__Output as UpdateRequest } from '../rpc/gen/svc/storage/v1/UpdateRequest.js';
import type { DeleteRequest__Output as DeleteRequest } from '../rpc/gen/svc/storage/v1/DeleteRequest.js';
import type { WatchRequest__Output as WatchRequest } from '../rpc/gen/svc/storage/v1/WatchRequest.js';
import type { CompactRequest__Output as CompactRequest } from '../rpc/gen/svc/storage/v1/CompactRequest.js';

/** Resolves when the stream can take more, or when the watch is aborted. */
function writable(call: grpc.ServerWritableStream<unknown, unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    signal.addEventListener('abort', done);
  });
}

/** Ends a stream with the status of err. (Destroying the call would drop the status and its trailers.) */
function endWithError(call: grpc.ServerWritableStream<unknown, unknown>, err: unknown): void {
  const metadata = new grpc.Metadata();
  if (err instanceof RpcError) for (const [k, v] of Object.entries(err.trailers)) metadata.set(k, v);
  call.emit('error', {
    code: err instanceof RpcError ? err.code : grpc.status.INTERNAL, details: (err as Error)?.message ?? String(err), metadata,
  });
}

async function watch(store: StorageBackend, call: grpc.ServerWritableStream<WatchRequest, unknown>): Promise<void> {
  const { prefix, afterRevision, follow } = call.request;
  const aborted = new AbortController();
  const abort = (): void => aborted.abort();
  call.on('cancelled', abort);
  call.on('close', abort);
  try {
    for await (const event of store.watch(prefix, afterRevision, { follow, signal: aborted.signal })) {
      if (aborted.signal.aborted) return;
      if (!call.write(event)) await writable(call, aborted.signal);
    }
    if (!aborted.signal.aborted) call.end();
  } catch (err) {
    if (!aborted.signal.aborted) endWithError(call, err);
  } finally {
    call.off('cancelled', abort);
    call.off('close', abort);
  }
}

export function storageHandlers(store: StorageBackend): Handlers {
  return {
    Get: (req: GetRequest) => store.get(req.key, req.revision, { allowCached: req.allowCached }),
    List: (req: ListRequest) => store.list(req.prefix, {
      revision: req.revision, limit: req.limit, continueAfter: req.continueAfter, allowCached: req.allowCached,
    }),
    Create: (req: CreateRequest) => store.create(req.key, req.value, req.uid),
    Update: (req: UpdateRequest) => store.update(req.key, req.value, req.preconditions ?? {}),
    Delete: (req: DeleteRequest) => store.delete(req.key, req.preconditions ?? {}),
    Watch: (call: grpc.ServerWritableStream<WatchRequest, unknown>) => watch(store, call),
    CurrentRevision: () => store.currentRevision(),
    Compact: async (req: CompactRequest) => ({ compactedRevision: await store.compact(req.revision) }),
  };
}
