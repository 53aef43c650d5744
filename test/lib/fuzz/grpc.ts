// Seeded bad messages on the internal gRPC APIs, written as raw protobuf so that
// fields can carry values of the wrong wire type, huge or broken strings, random
// bytes and truncated messages. Every call must end in a gRPC status: never
// UNKNOWN or INTERNAL (an undecodable request is INVALID_ARGUMENT).
import { api, grpc } from '../../../internal/rpc/index.js';
import { pool } from './send.js';
import type { Rng } from './random.js';

interface FieldDescriptor {
  name: string;
  number: number;
  type: string;
  label: string;
  typeName: string;
}

type ServiceName = 'storage' | 'authn' | 'authz' | 'admission';
type Definition = grpc.ServiceDefinition;

/** Each service the API serves at each address (authn and authz serve metrics too). */
const TARGETS: Array<{ at: ServiceName; definition: Definition }> = [
  { at: 'storage', definition: api.svc.storage.v1.Storage.service },
  { at: 'authn', definition: api.svc.authn.v1.Authentication.service },
  { at: 'authn', definition: api.svc.metrics.v1.Metrics.service },
  { at: 'authz', definition: api.svc.authz.v1.Authorization.service },
  { at: 'authz', definition: api.svc.metrics.v1.Metrics.service },
  { at: 'admission', definition: api.svc.admission.v1.Admission.service },
];

/** Storage writes go under this prefix only, so no service reads fuzzed values as its own objects. */
const WRITE_PREFIX = 'fuzz/';
const WRITES = new Set(['/svc.storage.v1.Storage/Create', '/svc.storage.v1.Storage/Update', '/svc.storage.v1.Storage/Delete']);

/** The message or enum named `typeName`, looked up from the package of `scope` outwards as protobuf scoping does. */
function lookup(scope: string, typeName: string): any {
  const parts = scope.split('.');
  for (let n = parts.length; n >= 0; n--) {
    let node: any = api;
    for (const p of [...parts.slice(0, n), ...typeName.replace(/^\./, '').split('.')]) node = node?.[p];
    if (node?.type) return node;
  }
  return undefined;
}

class Writer {
  private chunks: Buffer[] = [];

  varint(value: bigint): this {
    let v = BigInt.asUintN(64, value);
    const bytes: number[] = [];
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v) b |= 0x80;
      bytes.push(b);
    } while (v);
    this.chunks.push(Buffer.from(bytes));
    return this;
  }

  raw(bytes: Buffer): this {
    this.chunks.push(bytes);
    return this;
  }

  key(number: number, wireType: number): this {
    return this.varint(BigInt(number) << 3n | BigInt(wireType));
  }

  delimited(bytes: Buffer): this {
    return this.varint(BigInt(bytes.length)).raw(bytes);
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const WIRE: Record<string, number> = {
  TYPE_DOUBLE: 1, TYPE_FIXED64: 1, TYPE_SFIXED64: 1, TYPE_FLOAT: 5, TYPE_FIXED32: 5, TYPE_SFIXED32: 5,
  TYPE_STRING: 2, TYPE_BYTES: 2, TYPE_MESSAGE: 2,
};

const INTEGERS = [0n, 1n, -1n, 2n ** 31n, -(2n ** 31n), 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n, 1000n, 42n];
const KEYS = ['', 'a', 'no-slash', '/', 'core/', 'core/configmaps/', 'core/configmaps/default/', 'core/configmaps/default/x', 'fuzz/', 'fuzz/a/b/c',
  'a\u0000b', '\u0000', '..', 'rbac.authorization.svc.io/clusterroles/', 'x'.repeat(70_000)];

/** A string for a field: junk, keys, JSON, huge, or invalid UTF-8 (as raw bytes). */
function stringValue(rng: Rng, field: string, method: string): Buffer {
  if (/key|prefix|continue/i.test(field)) {
    const key = rng.chance(0.7) ? rng.pick(KEYS) : rng.junk(30);
    return Buffer.from(WRITES.has(method) && !key.startsWith(WRITE_PREFIX) && key !== '' ? WRITE_PREFIX + key : key, 'utf8');
  }
  switch (rng.int(6)) {
    case 0: return rng.bytes(rng.length(64));
    case 1: return Buffer.from('x'.repeat(rng.pick([256, 65_536, 1_000_000])));
    case 2: return Buffer.from(rng.pick(['CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'get', 'list', '*', 'system:masters', 'system:anonymous',
      'default', 'pods', 'v1', 'apps', 'status', 'token', '{}', '[]', 'null']));
    default: return Buffer.from(rng.junk(40), 'utf8');
  }
}

/** Bytes for a `bytes` field: random, broken JSON, or a JSON value of the wrong shape. */
function bytesValue(rng: Rng): Buffer {
  switch (rng.int(5)) {
    case 0: return rng.bytes(rng.length(256));
    case 1: return Buffer.from(rng.pick(['{', '{bad', 'null', '[]', '"x"', '5', '{"metadata":5}', '{"kind":"Pod","metadata":{"name":[]}}',
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"a":5}}', '{"spec":{"containers":"x"}}']));
    case 2: return Buffer.from(JSON.stringify({ kind: rng.junk(10), apiVersion: rng.junk(10), metadata: { name: rng.junk(10), labels: rng.junk(5) } }));
    case 3: return Buffer.from(`k8s\u0000${rng.junk(20)}`, 'latin1');
    default: return Buffer.alloc(0);
  }
}

/** Writes one field with a value of its type, or (sometimes) of another wire type altogether. */
function writeField(rng: Rng, w: Writer, f: FieldDescriptor, scope: string, method: string, depth: number): void {
  if (rng.chance(0.08)) {
    const wrong = rng.pick([0, 1, 2, 5]);
    w.key(f.number, wrong);
    if (wrong === 0) w.varint(rng.pick(INTEGERS));
    else if (wrong === 1) w.raw(rng.bytes(8));
    else if (wrong === 5) w.raw(rng.bytes(4));
    else w.delimited(rng.bytes(rng.length(32)));
    return;
  }
  const wire = WIRE[f.type] ?? 0;
  w.key(f.number, wire);
  if (wire === 1) w.raw(rng.bytes(8));
  else if (wire === 5) w.raw(rng.bytes(4));
  else if (f.type === 'TYPE_STRING') w.delimited(stringValue(rng, f.name, method));
  else if (f.type === 'TYPE_BYTES') w.delimited(bytesValue(rng));
  else if (f.type === 'TYPE_MESSAGE') w.delimited(depth < 4 && rng.chance(0.85) ? message(rng, lookup(scope, f.typeName), scope, method, depth + 1) : rng.bytes(rng.length(16)));
  else if (f.type === 'TYPE_BOOL') w.varint(rng.pick([0n, 1n, 2n, 2n ** 63n]));
  else if (f.type === 'TYPE_ENUM') w.varint(rng.chance(0.7) ? BigInt(rng.int(6)) : rng.pick(INTEGERS));
  else w.varint(rng.pick(INTEGERS));
}

/** A message of the given type with random fields (repeated ones several times), or junk when the type is unknown. */
function message(rng: Rng, type: any, scope: string, method: string, depth = 0): Buffer {
  const fields: FieldDescriptor[] = type?.type?.field ?? [];
  if (fields.length === 0) return rng.chance(0.8) ? Buffer.alloc(0) : rng.bytes(rng.length(8));
  const w = new Writer();
  for (const f of fields) {
    if (!rng.chance(0.7)) continue;
    const times = f.label === 'LABEL_REPEATED' ? rng.int(4) : rng.chance(0.05) ? 2 : 1;
    for (let i = 0; i < times; i++) writeField(rng, w, f, scope, method, depth);
  }
  if (rng.chance(0.1)) w.key(1 + rng.int(2000), 2).delimited(rng.bytes(rng.length(16)));
  return w.finish();
}

/** A request body: a random message, sometimes cut short or replaced by random bytes. */
function requestBytes(rng: Rng, def: grpc.MethodDefinition<any, any> & { requestType?: any }): Buffer {
  const scope = def.path.slice(1).split('/')[0].split('.').slice(0, -1).join('.');
  if (rng.chance(0.08)) return rng.bytes(rng.length(128));
  const bytes = message(rng, def.requestType, scope, def.path);
  return rng.chance(0.08) ? bytes.subarray(0, rng.int(bytes.length + 1)) : bytes;
}

interface Outcome {
  code: grpc.status;
  details: string;
}

const identity = (b: Buffer) => b;
/** Every call is answered well within this, however bad its request. */
const CALL_TIMEOUT_MS = 10_000;

/** One call with raw bytes; a stream is read until its first message or status, then cancelled. */
function callRaw(client: grpc.Client, def: grpc.MethodDefinition<any, any>, bytes: Buffer): Promise<Outcome> {
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  return new Promise((resolve) => {
    if (!def.responseStream) {
      client.makeUnaryRequest(def.path, identity, identity, bytes, { deadline }, (err) =>
        resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '' }));
      return;
    }
    const stream = client.makeServerStreamRequest(def.path, identity, identity, bytes, { deadline });
    let done = false;
    const finish = (o: Outcome) => { if (!done) { done = true; resolve(o); } };
    stream.on('data', () => { finish({ code: grpc.status.OK, details: '' }); stream.cancel(); });
    stream.on('error', (err: grpc.ServiceError) => finish({ code: err.code, details: err.details }));
    stream.on('status', (s: grpc.StatusObject) => finish({ code: s.code, details: s.details }));
    setTimeout(() => { finish({ code: grpc.status.OK, details: 'still streaming' }); stream.cancel(); }, 500);
  });
}

/** What is wrong with an outcome, or undefined. */
function judge(o: Outcome): string | undefined {
  if (o.code === grpc.status.UNKNOWN) return `UNKNOWN: ${o.details}`;
  if (o.code === grpc.status.INTERNAL) return `INTERNAL: ${o.details}`;
  if (o.code === grpc.status.UNAVAILABLE) return `UNAVAILABLE (did the service die?): ${o.details}`;
  if (o.code === grpc.status.DEADLINE_EXCEEDED) return `no answer within ${CALL_TIMEOUT_MS} ms: ${o.details}`;
  return undefined;
}

export interface FuzzCall {
  at: ServiceName;
  def: grpc.MethodDefinition<any, any>;
  bytes: Buffer;
}

/** `count` calls per service, drawn from rng alone. */
export function drawCalls(rng: Rng, count: number): FuzzCall[] {
  return TARGETS.flatMap(({ at, definition }) => {
    const methods = Object.values(definition);
    return Array.from({ length: count }, () => {
      const def = rng.pick(methods) as grpc.MethodDefinition<any, any>;
      return { at, def, bytes: requestBytes(rng, def) };
    });
  });
}

/** Runs `count` fuzzed calls against every service; returns the failures, each with its method and request bytes. */
export async function fuzzGrpc(addresses: Record<ServiceName, string>, rng: Rng, count: number, concurrency: number,
  outcomes = new Map<string, number>()): Promise<string[]> {
  const clients = new Map<ServiceName, grpc.Client>();
  const clientFor = (at: ServiceName) => {
    if (!clients.has(at)) clients.set(at, new grpc.Client(addresses[at], grpc.credentials.createInsecure()));
    return clients.get(at)!;
  };
  const calls = drawCalls(rng, count);
  const failures: string[] = [];
  try {
    await pool(calls.length, concurrency, async (i) => {
      const { at, def, bytes } = calls[i];
      const outcome = await callRaw(clientFor(at), def, bytes);
      const key = `${def.path} ${grpc.status[outcome.code]}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      const problem = judge(outcome);
      if (problem) failures.push(`#${i} ${at} ${def.path}: ${problem}\n        request (base64): ${bytes.toString('base64').slice(0, 600)}`);
    });
  } finally {
    for (const client of clients.values()) client.close();
  }
  return failures;
}
