// The messages and services of proto/ and of the standard health service as protobufjs types, built from the
// descriptor that `make build` generates (scripts/gen-proto.mjs): a process parses no .proto text at start and
// loads only the light protobufjs, without its parser.
import protobuf from 'protobufjs/light.js';
import descriptor from './gen/descriptor.json' with { type: 'json' };

export const protoRoot = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
protoRoot.resolveAll();
