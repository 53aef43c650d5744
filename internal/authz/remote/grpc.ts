// The call of an external authorizer: any program serving
// svc.authz.v1.Authorization/Authorize, reached over gRPC (TLS with a CA and
// an optional client certificate, or plaintext on a trusted link).
import { readFileSync } from 'node:fs';
import { api, clientOptions, grpc, unary } from '../../rpc/index.js';
import type { AuthorizationClient } from '../../rpc/gen/svc/authz/v1/Authorization.js';
import type { AuthorizeResponse__Output } from '../../rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import { verdict, type Decision } from '../types.js';
import { TimeoutError, type RemoteCall } from './guarded.js';

export interface GrpcTls {
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  serverName?: string;
}

const DECISIONS = new Set<Decision>(['ALLOW', 'DENY', 'NO_OPINION']);

function credentials(tls: GrpcTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const read = (path?: string) => (path ? readFileSync(path) : null);
  return grpc.credentials.createSsl(read(tls.certificateAuthority), read(tls.clientKey), read(tls.clientCertificate));
}

export function grpcCall(address: string, tls: GrpcTls | undefined): { call: RemoteCall; close(): void } {
  const options = tls?.serverName ? { ...clientOptions, 'grpc.ssl_target_name_override': tls.serverName } : clientOptions;
  const client = new api.svc.authz.v1.Authorization(address, credentials(tls), options) as AuthorizationClient;
  const call: RemoteCall = async (attributes, timeoutMs) => {
    let answer: AuthorizeResponse__Output;
    try {
      answer = await unary<AuthorizeResponse__Output>(client, client.Authorize, {
        user: attributes.user, resource: attributes.resource, nonResource: attributes.nonResource,
      }, timeoutMs);
    } catch (err) {
      const e = err as grpc.ServiceError;
      if (e.code === grpc.status.DEADLINE_EXCEEDED) throw new TimeoutError(`the authorizer at ${address} did not answer within ${timeoutMs}ms`);
      throw new Error(`the authorizer at ${address} failed: ${e.details ?? e.message}`);
    }
    if (!DECISIONS.has(answer.decision as Decision)) throw new Error(`the authorizer at ${address} answered an unknown decision ${answer.decision}`);
    return verdict(answer.decision as Decision, answer.reason, answer.evaluationError || undefined);
  };
  return { call, close: () => client.close() };
}
