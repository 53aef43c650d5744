// Remote authorizers from their settings: a webhook named by a client
// configuration file, or an external gRPC authorizer.
import type { AuthzMetrics } from '../metrics.js';
import { GuardedAuthorizer, type RemoteOptions } from './guarded.js';
import { grpcCall, type GrpcTls } from './grpc.js';
import { loadWebhookTarget } from './kubeconfig.js';
import type { SarVersion } from './sar.js';
import { webhookCall } from './webhook.js';

export function webhookAuthorizer(options: RemoteOptions, kubeConfigFile: string, version: SarVersion, metrics: AuthzMetrics): GuardedAuthorizer {
  const { call, close } = webhookCall(loadWebhookTarget(kubeConfigFile), version);
  return new GuardedAuthorizer(options, call, metrics, close);
}

export function grpcAuthorizer(options: RemoteOptions, address: string, tls: GrpcTls | undefined, metrics: AuthzMetrics): GuardedAuthorizer {
  const { call, close } = grpcCall(address, tls);
  return new GuardedAuthorizer(options, call, metrics, close);
}
