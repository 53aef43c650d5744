// The gRPC APIs as every process loads them (from the descriptor the build generates) against what
// @grpc/proto-loader makes of the .proto files: the same methods, paths, options and message bytes.
import { expect } from 'chai';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { fileURLToPath } from 'node:url';
import { api } from '../../internal/rpc/index.js';
import { healthApi } from '../../internal/rpc/api.js';

const PROTO_DIR = fileURLToPath(new URL('../../../proto', import.meta.url));
const options: protoLoader.Options = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] };
const fromProto = protoLoader.loadSync(['svc/storage/v1/storage.proto', 'svc/authn/v1/authn.proto', 'svc/authz/v1/authz.proto',
  'svc/admission/v1/admission.proto', 'svc/metrics/v1/metrics.proto', 'svc/rpc/v1/multiplex.proto', healthProtoPath], options);
const services = Object.entries(fromProto).filter(([, d]) => !('format' in d)) as Array<[string, protoLoader.ServiceDefinition]>;
const loaded = (name: string): Record<string, any> => name.split('.').reduce((o: any, k) => o?.[k], name.startsWith('grpc.') ? healthApi : api)?.service;

describe('rpc: the APIs loaded from the build-time descriptor', () => {
  it('has every service and method of the .proto files, with their paths, streaming and options', () => {
    expect(services.length).to.be.greaterThan(6);
    for (const [name, methods] of services) {
      const ours = loaded(name);
      expect(ours, name).to.be.an('object');
      expect(Object.keys(ours).sort(), name).to.deep.equal(Object.keys(methods).sort());
      for (const [m, def] of Object.entries(methods)) {
        const pick = (d: any) => ({ path: d.path, requestStream: d.requestStream, responseStream: d.responseStream, originalName: d.originalName,
          idempotency: d.options.idempotency_level });
        expect(pick(ours[m]), `${name}.${m}`).to.deep.equal(pick(def));
      }
    }
  });

  it('encodes and decodes messages as proto-loader does: camelCase fields, longs as numbers, enums as names, maps, defaults', () => {
    const cases: Array<[string, string, object, object]> = [
      ['svc.storage.v1.Storage', 'Get', { key: '/registry/pods/default/a', revision: 2 ** 40, allowCached: true },
        { kv: { key: '/registry/pods/default/a', value: Buffer.from('{}'), modRevision: 2 ** 40, createRevision: 3 }, revision: 2 ** 40 + 1 }],
      ['svc.storage.v1.Storage', 'Watch', { prefix: '/registry/pods/', afterRevision: 7, follow: true }, {}],
      ['svc.authz.v1.Authorization', 'Authorize',
        { user: { username: 'alice', groups: ['g'], extra: { k: { values: ['v'] } } }, resource: { verb: 'get', resource: 'pods' } },
        { decision: 'DENY', evaluationError: 'e', ttlMs: 1500, validity: 'UNTIL_POLICY_CHANGES' }],
      ['svc.rpc.v1.Multiplex', 'Batches', { frames: [{ id: 3, method: '/svc.storage.v1.Storage/Get', payload: Buffer.from('x') }] }, {}],
      ['grpc.health.v1.Health', 'Check', { service: 'svc.storage.v1.Storage' }, { status: 'NOT_SERVING' }],
    ];
    for (const [service, method, request, response] of cases) {
      const theirs = fromProto[service] as protoLoader.ServiceDefinition;
      const ours = loaded(service);
      const what = `${service}.${method}`;
      const bytes = theirs[method].requestSerialize(request);
      expect(bytes.length, what).to.be.greaterThan(0);
      expect(ours[method].requestSerialize(request), what).to.deep.equal(bytes);
      expect(ours[method].requestDeserialize(bytes), what).to.deep.equal(theirs[method].requestDeserialize(bytes));
      const answer = theirs[method].responseSerialize(response);
      expect(ours[method].responseSerialize(response), what).to.deep.equal(answer);
      expect(ours[method].responseDeserialize(answer), what).to.deep.equal(theirs[method].responseDeserialize(answer));
    }
  });
});
