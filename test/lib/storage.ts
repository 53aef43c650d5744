// A storage service on a loopback port over a store the test opened, for tests of storage's gRPC API and its clients.
import { api, serve, type RunningServer } from '../../internal/rpc/index.js';
import { storageHandlers } from '../../internal/storage/service.js';
import type { StorageBackend } from '../../internal/storage/backend.js';

/** Serves the store's gRPC API on address (port 0: a free one). */
export const serveStorage = (store: StorageBackend, address = '127.0.0.1:0'): Promise<RunningServer> =>
  serve(address, [{ name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: storageHandlers(store) }]);
