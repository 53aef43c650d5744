// The gRPC APIs of proto/ and the standard health service as grpc-js package definitions, made once from the
// build-time descriptor. They are what @grpc/proto-loader makes of the .proto files, less the file descriptors
// only server reflection reads: building those and loading the loader cost each process more at start than the
// rest of its gRPC set-up.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';
import { protoRoot } from './descriptor.js';
import { finished, sizedWriter } from './writer.js';
import type { ProtoGrpcType as StorageProto } from './gen/storage.js';
import type { ProtoGrpcType as AuthnProto } from './gen/authn.js';
import type { ProtoGrpcType as AuthzProto } from './gen/authz.js';
import type { ProtoGrpcType as AdmissionProto } from './gen/admission.js';
import type { ProtoGrpcType as MetricsProto } from './gen/metrics.js';
import type { ProtoGrpcType as MultiplexProto } from './gen/multiplex.js';

/** Messages as the generated types in gen/ describe them (proto-loader's longs: Number, enums: String, defaults, oneofs). */
const conversion: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, oneofs: true };

/** Room for a message beyond the size of the one before it. */
const SIZE_SLACK = 256;

function serializer(type: protobuf.Type): grpc.serialize<object> {
  // The messages of one type are of much the same size: each is written into a buffer sized by the one before.
  let previous = 0;
  return (value) => {
    if (Array.isArray(value)) throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`);
    const bytes = finished(type.encode(type.fromObject(value), sizedWriter(previous + SIZE_SLACK)));
    previous = bytes.length;
    return bytes;
  };
}

function deserializer(type: protobuf.Type): grpc.deserialize<object> {
  return (bytes) => type.toObject(type.decode(bytes), conversion);
}

function serviceDefinition(service: protobuf.Service): grpc.ServiceDefinition {
  const name = service.fullName.slice(1);
  return Object.fromEntries(service.methodsArray.map((m) => [m.name, {
    path: `/${name}/${m.name}`,
    requestStream: !!m.requestStream,
    responseStream: !!m.responseStream,
    requestSerialize: serializer(m.resolvedRequestType!),
    requestDeserialize: deserializer(m.resolvedRequestType!),
    responseSerialize: serializer(m.resolvedResponseType!),
    responseDeserialize: deserializer(m.resolvedResponseType!),
    originalName: m.name[0].toLowerCase() + m.name.slice(1),
    // The method's options, as proto-loader gives them: clients repeat elsewhere what is free of side effects.
    options: { deprecated: false, idempotency_level: 'IDEMPOTENCY_UNKNOWN', ...m.options },
  }]));
}

/** Every service under the root, by full name, as grpc.loadPackageDefinition takes them. */
function packageDefinition(ns: protobuf.NamespaceBase): Record<string, grpc.ServiceDefinition> {
  const defs: Record<string, grpc.ServiceDefinition> = {};
  for (const obj of ns.nestedArray) {
    if (obj instanceof protobuf.Service) defs[obj.fullName.slice(1)] = serviceDefinition(obj);
    else if (obj instanceof protobuf.Namespace) Object.assign(defs, packageDefinition(obj));
  }
  return defs;
}

const loaded = grpc.loadPackageDefinition(packageDefinition(protoRoot) as Parameters<typeof grpc.loadPackageDefinition>[0]);
type ApiTypes = StorageProto & AuthnProto & AuthzProto & AdmissionProto & MetricsProto & MultiplexProto;
/** The loaded gRPC APIs: `api.svc.storage.v1.Storage`, ... */
export const api = loaded as unknown as ApiTypes;
/** The standard health service: `healthApi.grpc.health.v1.Health`. */
export const healthApi = loaded as any;
