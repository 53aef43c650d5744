import { expect } from 'chai';
import { Encoder } from 'cbor-x';
import { MAX_NESTING_DEPTH, cborTooDeep, jsonTooDeep, valueTooDeep } from '../../internal/apimachinery/depth.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { parseFieldSelector } from '../../internal/apimachinery/selectors.js';
import { decodeEnvelope, encodeEnvelope } from '../../internal/apimachinery/protobuf/index.js';
import { parseYamlWithDuplicates } from '../../gateway/fieldvalidation.js';
import { decodeBody } from '../../gateway/negotiation.js';
import { apply, applyJsonPatch, rootType } from '../../internal/patch/index.js';
import { parseQuantity } from '../../internal/registry/quantity.js';
import { checkSchema } from '../../internal/registry/index.js';
import { Quantity } from '../../internal/cel/quantity.js';
import { trim } from '../../internal/cel/strings.js';
import { parseDuration } from '../../internal/apimachinery/protobuf/time.js';
import { FlagError, parseFlags } from '../../internal/config/flags.js';

const failure = (fn: () => unknown): StatusError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
};
const nestedJson = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
const nestedValue = (depth: number): unknown => {
  let v: unknown = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
};
/** CBOR of `depth` nested one-item arrays, built by hand so no recursive encoder is involved. */
const nestedCbor = (depth: number) => Buffer.concat([Buffer.alloc(depth - 1, 0x81), Buffer.from([0x80])]);

describe('nesting limits', () => {
  it('the JSON scan counts objects and lists, and skips brackets inside strings and escaped quotes', () => {
    expect(jsonTooDeep(nestedJson(MAX_NESTING_DEPTH))).to.equal(false);
    expect(jsonTooDeep(nestedJson(MAX_NESTING_DEPTH + 1))).to.equal(true);
    expect(jsonTooDeep('['.repeat(MAX_NESTING_DEPTH + 1))).to.equal(true);
    expect(jsonTooDeep(`{"s":"${'['.repeat(MAX_NESTING_DEPTH * 2)}\\"${'{'.repeat(MAX_NESTING_DEPTH * 2)}"}`)).to.equal(false);
    expect(jsonTooDeep('[1,[2],[3],[4]]', 2)).to.equal(false);
    expect(jsonTooDeep('[1,[2,[3]]]', 2)).to.equal(true);
  });

  it('the CBOR scan counts arrays, maps, tags and indefinite containers, and skips string contents', () => {
    expect(cborTooDeep(nestedCbor(MAX_NESTING_DEPTH))).to.equal(false);
    expect(cborTooDeep(nestedCbor(MAX_NESTING_DEPTH + 1))).to.equal(true);
    expect(cborTooDeep(Buffer.alloc(MAX_NESTING_DEPTH + 1, 0x9f))).to.equal(true);
    expect(cborTooDeep(Buffer.alloc(MAX_NESTING_DEPTH + 1, 0xc1))).to.equal(true);
    const wide = new Encoder({ useRecords: false }).encode({ a: [1, 2, { b: 'x'.repeat(300) }], c: Buffer.alloc(1000, 0x81), d: [[[]]] });
    expect(cborTooDeep(wide, 4)).to.equal(false);
    expect(cborTooDeep(wide, 3)).to.equal(true);
  });

  it('the value walk measures shared parts at their deepest and counts a value containing itself as too deep', () => {
    const shared = nestedValue(10);
    expect(valueTooDeep({ x: shared, y: { z: shared } }, 12)).to.equal(false);
    expect(valueTooDeep({ x: shared, y: { z: shared } }, 11)).to.equal(true);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(valueTooDeep(cycle)).to.equal(true);
  });

  it('bodies of every media type decode up to the limit and answer 400 BadRequest beyond it', () => {
    const cbor = new Encoder({ useRecords: false, mapsAsObjects: true });
    for (const [type, ok, deep] of [
      ['application/json', nestedJson(MAX_NESTING_DEPTH), nestedJson(MAX_NESTING_DEPTH + 1)],
      ['application/yaml', `x: ${nestedJson(MAX_NESTING_DEPTH - 1)}`, `x: ${nestedJson(MAX_NESTING_DEPTH)}`],
      ['application/yaml', `${'- '.repeat(MAX_NESTING_DEPTH - 1)}x\n`, `${'- '.repeat(MAX_NESTING_DEPTH + 1)}x\n`],
      ['application/cbor', cbor.encode(nestedValue(MAX_NESTING_DEPTH)), nestedCbor(MAX_NESTING_DEPTH + 1)],
    ] as Array<[string, string | Buffer, string | Buffer]>) {
      expect(typeof decodeBody(Buffer.from(ok), type, true), type).to.equal('object');
      const err = failure(() => decodeBody(Buffer.from(deep), type, true));
      expect([err.code, err.reason], type).to.deep.equal([400, 'BadRequest']);
      expect(err.message).to.include(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
    }
  });

  it('YAML nested by indentation is refused while parsing, JSON sent as YAML once parsed', () => {
    const block = (depth: number) => Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n';
    expect(parseYamlWithDuplicates(block(MAX_NESTING_DEPTH)).value).to.be.an('object');
    expect(failure(() => parseYamlWithDuplicates(block(MAX_NESTING_DEPTH + 1))).code).to.equal(400);
    // JSON sent as YAML (as kubectl sends an apply) is read as JSON, with the same limit.
    expect(parseYamlWithDuplicates(nestedJson(MAX_NESTING_DEPTH)).value).to.be.an('object');
    expect(failure(() => parseYamlWithDuplicates(nestedJson(MAX_NESTING_DEPTH + 1))).message).to.include('exceeded max depth');
  });

  it('Protobuf objects embedded in each other beyond the limit answer 400, not a stack overflow', () => {
    const revision = (data?: Uint8Array) => ({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1, ...(data ? { data } : {}) });
    const embedded = (levels: number) => {
      let bytes = encodeEnvelope(revision());
      for (let i = 0; i < levels; i++) bytes = encodeEnvelope(revision(bytes));
      return bytes;
    };
    expect(decodeEnvelope(embedded(50))).to.deep.include({ kind: 'ControllerRevision' });
    const err = failure(() => decodeEnvelope(embedded(2 * MAX_NESTING_DEPTH)));
    expect([err.code, err.reason]).to.deep.equal([400, 'BadRequest']);
    expect(err.message).to.include('exceeded max depth');
  });
});

describe('YAML aliases', () => {
  it('are written out as copies, so changing one place leaves the other', () => {
    const { value } = parseYamlWithDuplicates('a: &x {k: [1, 2]}\nb: *x\nc: &y v\nd: *y\n') as { value: any };
    expect(value).to.deep.equal({ a: { k: [1, 2] }, b: { k: [1, 2] }, c: 'v', d: 'v' });
    expect(value.a).to.not.equal(value.b);
  });

  it('refuse exponential expansion ("billion laughs"), self-reference and unknown anchors with 400', () => {
    const levels = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) levels.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
    for (const text of [levels.join('\n'), 'a: &a [1, *a]', 'a: *nope']) {
      const err = failure(() => parseYamlWithDuplicates(text));
      expect([err.code, err.reason], text.slice(0, 40)).to.deep.equal([400, 'BadRequest']);
    }
  });

  it('refuse aliases that nest a value beyond the limit though the text is shallow', () => {
    const chain = ['a0: &a0 {k: 1}'];
    for (let i = 1; i <= MAX_NESTING_DEPTH; i++) chain.push(`a${i}: &a${i} {k: *a${i - 1}}`);
    expect(failure(() => parseYamlWithDuplicates(chain.join('\n'))).message).to.include('exceeded max depth');
  });

  it('many anchors and aliases in one document are each resolved once', () => {
    const text = `data:\n${Array.from({ length: 20_000 }, (_, i) => `  k${i}: &a${i} v${i}\n  l${i}: *a${i}\n`).join('')}`;
    const { value } = parseYamlWithDuplicates(text) as { value: { data: Record<string, string> } };
    expect(value.data.l19999).to.equal('v19999');
  });
});

describe('JSON patch growth', () => {
  const doc = { metadata: { name: 'a' }, data: { k: 'x'.repeat(1000) } };

  it('refuses with 422 copies that would add more than 3 MiB, however few the operations', () => {
    const ops = Array.from({ length: 24 }, () => ({ op: 'copy', from: '/data', path: '/data/k2' }));
    ops.push(...Array.from({ length: 24 }, (_, i) => ({ op: 'copy', from: '', path: `/c${i}` })));
    const err = failure(() => applyJsonPatch(doc, ops));
    expect([err.code, err.reason]).to.deep.equal([422, 'Invalid']);
    expect(err.details?.causes?.[0].message).to.match(/accumulated size increase of copy is \d+, exceeding the limit 3145728/);
  });

  it('refuses with 422 a patch whose result would nest deeper than the limit', () => {
    const base = { a: nestedValue(300) };
    const below = `${'/a'.repeat(150)}/c`;
    expect(applyJsonPatch(base, [{ op: 'copy', from: '/a', path: below }])).to.be.an('object');
    const err = failure(() => applyJsonPatch(base, [{ op: 'copy', from: '/a', path: `${'/a'.repeat(250)}/c` }]));
    expect([err.code, err.reason]).to.deep.equal([422, 'Invalid']);
    expect(err.details?.causes?.[0].message).to.include(`deeper than ${MAX_NESTING_DEPTH}`);
    const moved = failure(() => applyJsonPatch(base, [{ op: 'add', path: '/b', value: nestedValue(250) }, { op: 'move', from: '/a', path: `/b${'/a'.repeat(240)}/c` }]));
    expect(moved.code).to.equal(422);
  });

  it('moves and copies look their source up in place: 10,000 moves in a long list, and a missing source is a 422', () => {
    const list = { list: Array.from({ length: 100_000 }, (_, i) => i) };
    const moved = applyJsonPatch(list, Array.from({ length: 10_000 }, () => ({ op: 'move', from: '/list/0', path: '/list/-' })));
    expect(moved.list.slice(0, 2)).to.deep.equal([10_000, 10_001]);
    for (const from of ['/nope', '/list/100000', '/list/01', '/list/x/y']) {
      const err = failure(() => applyJsonPatch(list, [{ op: 'copy', from, path: '/c' }]));
      expect([err.code, err.details?.causes?.[0].message], from).to.deep.equal([422, `Cannot perform the operation from a path that does not exist: ${from}`]);
    }
  });

  it('applies copies within the limits and refuses more than 10,000 operations with 413', () => {
    expect(applyJsonPatch(doc, [{ op: 'copy', from: '/data/k', path: '/data/k2' }]).data).to.deep.equal({ k: 'x'.repeat(1000), k2: 'x'.repeat(1000) });
    const err = failure(() => applyJsonPatch(doc, Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/data/k', value: 'x' }))));
    expect([err.code, err.reason]).to.deep.equal([413, 'RequestEntityTooLarge']);
  });
});

describe('patches the library trips over', () => {
  it('a JSON patch through a missing or replaced document answers 422 naming only the path', () => {
    const doc = { metadata: { name: 'x' } };
    for (const ops of [[{ op: 'copy', path: '', from: '/metadata/labels/a' }, { op: 'move', path: '/spec/a', from: '/metadata/name' }],
      [{ op: 'replace', path: '', value: 'v' }, { op: 'move', path: '/spec/containers/9', from: '/metadata/name' }]]) {
      const err = failure(() => applyJsonPatch(doc, ops));
      expect([err.code, err.reason]).to.deep.equal([422, 'Invalid']);
      expect(err.details?.causes?.[0].message).to.not.include('\n');
    }
  });

  it('an apply setting a map to null removes it instead of failing', () => {
    const type = rootType({ group: 'batch', version: 'v1', kind: 'Job' })!;
    const opts = { type, apiVersion: 'batch/v1', kind: 'Job', manager: 'm', force: true };
    const live = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', labels: { x: 'y' } }, spec: {} };
    const out = apply(live, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', labels: null, annotations: { n: 'x' } } } as never, opts);
    expect(out.metadata).to.not.have.property('labels');
    expect(out.metadata?.annotations).to.deep.equal({ n: 'x' });
  });
});

describe('validation patterns on hostile input', () => {
  const long = '1'.repeat(50_000);

  it('quantities: long digit runs are read, and long non-quantities are refused, each in one pass', () => {
    expect(parseQuantity(`${long}m`)).to.be.a('number');
    expect(parseQuantity(`${long}x`)).to.equal(undefined);
    expect(parseQuantity(`${long}e`)).to.equal(undefined);
    expect(parseQuantity('1.5Gi')).to.equal(1.5 * 2 ** 30);
    expect(parseQuantity('.5')).to.equal(0.5);
    expect(parseQuantity('5.')).to.equal(5);
    expect(() => Quantity.parse(`${long}x`)).to.throw(/quantities must match/);
    expect(Quantity.parse('1500m').nanos).to.equal(1_500_000_000n);
    expect(Quantity.parse('2e3').nanos).to.equal(2000n * 1_000_000_000n);
  });

  it('the schema check reports a long non-quantity with the upstream expression', () => {
    const schema = { type: 'object', properties: { q: { $ref: '#/definitions/io.svc.apimachinery.pkg.api.resource.Quantity' } } };
    const report = checkSchema({ q: `${long}x` }, schema as never);
    const causes = report.causes.map((c) => c.message ?? '');
    expect(causes.some((m) => m.includes("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))).to.equal(true);
    expect(checkSchema({ q: `${long}Mi` }, schema as never).causes).to.deep.equal([]);
  });

  it('field selectors split at the first unescaped operator, whatever the spaces', () => {
    expect(parseFieldSelector('a=b,c==d,e!=f')).to.deep.equal([
      { field: 'a', op: '=', value: 'b' }, { field: 'c', op: '=', value: 'd' }, { field: 'e', op: '!=', value: 'f' }]);
    expect(parseFieldSelector('metadata.name  = x')).to.deep.equal([{ field: 'metadata.name', op: '=', value: ' x' }]);
    expect(parseFieldSelector('a\\=b=c')).to.deep.equal([{ field: 'a=b', op: '=', value: 'c' }]);
    for (const bad of ['=a', 'a!b', 'ab', `a${' '.repeat(50_000)}b`]) expect(failure(() => parseFieldSelector(bad)).code, bad.slice(0, 10)).to.equal(400);
  });

  it('Go durations (Protobuf) read their parts, and a long run of digits without a unit is refused', () => {
    expect(parseDuration('1h30m')).to.equal(5400e9);
    expect(parseDuration('.5s')).to.equal(0.5e9);
    expect(() => parseDuration(`${long}x`)).to.throw(/invalid duration/);
  });

  it('duration flags are read by the same parser, in milliseconds, and a bad one is a FlagError', () => {
    const spec = { wait: { type: 'duration' as const, default: '1m30s', help: '' } };
    expect(parseFlags([], spec).duration('wait')).to.equal(90_000);
    expect(parseFlags(['--wait=1h0m0.5s'], spec).duration('wait')).to.equal(3_600_500);
    expect(parseFlags(['--wait', '0'], spec).duration('wait')).to.equal(0);
    expect(parseFlags(['--wait=1500us'], spec).duration('wait')).to.equal(1.5);
    for (const bad of ['5 minutes', '10', `${long}x`]) expect(() => parseFlags([`--wait=${bad}`], spec), bad.slice(0, 10)).to.throw(FlagError, /invalid duration/);
  });

  it('CEL trim strips Unicode spaces at both ends only', () => {
    expect(trim('\u3000 a b \t\n')).to.equal('a b');
    expect(trim(`a${' '.repeat(50_000)}b`)).to.equal(`a${' '.repeat(50_000)}b`);
    expect(trim('   ')).to.equal('');
  });
});
