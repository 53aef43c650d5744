// The standard health service (grpc.health.v1) of a server: the status of each of its services by name ('' is
// the server as a whole), answered to Check and List and pushed to every Watch stream of that name when it changes.
import * as grpc from '@grpc/grpc-js';
import { healthApi } from './api.js';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';
type Watcher = (status: ServingStatus) => void;

export class HealthService {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(initial: Record<string, ServingStatus> = {}) {
    for (const [name, status] of Object.entries(initial)) this.statuses.set(name, status);
  }

  setStatus(name: string, status: ServingStatus): void {
    this.statuses.set(name, status);
    for (const watcher of this.watchers.get(name) ?? []) watcher(status);
  }

  addToServer(server: grpc.Server): void {
    server.addService(healthApi.grpc.health.v1.Health.service, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const status = this.statuses.get(call.request.service);
        if (status) callback(null, { status });
        else callback({ code: grpc.status.NOT_FOUND, details: `Health status unknown for service ${call.request.service}` });
      },
      Watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
        const name = call.request.service;
        const watcher: Watcher = (status) => call.write({ status });
        const set = this.watchers.get(name) ?? new Set<Watcher>();
        this.watchers.set(name, set.add(watcher));
        call.on('cancelled', () => set.delete(watcher));
        call.write({ status: this.statuses.get(name) ?? 'SERVICE_UNKNOWN' });
      },
      List: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        callback(null, { statuses: Object.fromEntries([...this.statuses].map(([name, status]) => [name, { status }])) });
      },
    });
  }
}
