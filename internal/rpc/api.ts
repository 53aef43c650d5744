// The gRPC APIs of proto/ and the standard health service, loaded once.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as StorageProto } from './gen/storage.js';
import type { ProtoGrpcType as AuthnProto } from './gen/authn.js';
import type { ProtoGrpcType as AuthzProto } from './gen/authz.js';
import type { ProtoGrpcType as AdmissionProto } from './gen/admission.js';
import type { ProtoGrpcType as MetricsProto } from './gen/metrics.js';
import type { ProtoGrpcType as MultiplexProto } from './gen/multiplex.js';

export const PROTO_DIR = fileURLToPath(new URL('../../../proto', import.meta.url));

const loaderOptions: protoLoader.Options = {
  keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR],
};
const definition = protoLoader.loadSync(
  ['svc/storage/v1/storage.proto', 'svc/authn/v1/authn.proto', 'svc/authz/v1/authz.proto', 'svc/admission/v1/admission.proto',
    'svc/metrics/v1/metrics.proto', 'svc/rpc/v1/multiplex.proto'],
  loaderOptions,
);
type ApiTypes = StorageProto & AuthnProto & AuthzProto & AdmissionProto & MetricsProto & MultiplexProto;
/** The loaded gRPC APIs: `api.svc.storage.v1.Storage`, ... */
export const api = grpc.loadPackageDefinition(definition) as unknown as ApiTypes;

const healthDefinition = protoLoader.loadSync(healthProtoPath, loaderOptions);
export const healthApi = grpc.loadPackageDefinition(healthDefinition) as any;
