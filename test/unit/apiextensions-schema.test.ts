// A CRD version's compiled schema: pruning, nulls, defaults, value checks in
// the schema validator's words, list markers, embedded resources, and the
// validation rules with their messages, reasons, transition rules and budgets.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { compileVersionSchema } from '../../internal/apiextensions/schema.js';
import { compile } from '../../internal/cel/index.js';

type Obj = Record<string, any>;
const str = { type: 'string' };

const schema: Obj = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        ratio: { type: 'number', exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
        name: { type: 'string', minLength: 2, maxLength: 8, pattern: '^[a-z]+$' },
        mode: { type: 'string', enum: ['Fast', 'Slow'] },
        size: { 'x-svc-int-or-string': true },
        when: { type: 'string', format: 'date-time' },
        addr: { type: 'string', format: 'ipv4' },
        nickname: { type: 'string', nullable: true },
        color: { type: 'string', default: 'red' },
        tags: { type: 'array', items: str, maxItems: 3, minItems: 1, 'x-svc-list-type': 'set' },
        ports: { type: 'array', 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: str, port: { type: 'integer' } } } },
        labels: { type: 'object', additionalProperties: str, maxProperties: 2 },
        free: { type: 'object', 'x-svc-preserve-unknown-fields': true, properties: { known: { type: 'integer' } } },
        nested: { type: 'object', default: {}, properties: { level: { type: 'string', default: 'info' } } },
        template: { type: 'object', 'x-svc-embedded-resource': true, properties: { spec: { type: 'object', properties: { image: str } } } },
      },
      required: ['name'],
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

const obj = (spec: Obj = {}, extra: Obj = {}): ApiObject =>
  ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { name: 'web', ...spec }, ...extra });

const fields = (causes: StatusCause[]) => causes.map((c) => `${c.field} ${c.reason}`);

describe('compiled CRD schema: pruning, nulls and defaults', () => {
  const vs = compileVersionSchema(schema);

  it('drops unknown fields and reports them, keeping preserved and embedded ones', () => {
    const o = obj({ bogus: 1, free: { anything: { goes: true }, known: 1 }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: { image: 'x', extra: 2 } } }, { top: 1 });
    (o.metadata as Obj).unknownMeta = 'x';
    const report = vs.normalize(o);
    expect(report.unknownFields).to.have.members(['.top', '.spec.bogus', '.spec.template.spec.extra', '.spec.template.metadata.junk', '.metadata.unknownMeta']);
    expect(o).to.not.have.property('top');
    expect(o.spec).to.not.have.property('bogus');
    expect((o.spec as Obj).free).to.deep.equal({ anything: { goes: true }, known: 1 });
    expect((o.spec as Obj).template).to.deep.equal({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { image: 'x' } });
    expect(o.metadata).to.not.have.property('unknownMeta');
  });

  it('drops nulls the schema does not allow, keeps nullable ones, defaults nulls that have a default', () => {
    const o = obj({ mode: null, nickname: null, color: null });
    vs.normalize(o);
    expect(o.spec).to.not.have.property('mode');
    expect((o.spec as Obj).nickname).to.equal(null);
    expect((o.spec as Obj).color).to.equal('red');
  });

  it('applies defaults on write, nested ones too, and on reads from storage', () => {
    const o = obj();
    vs.normalize(o);
    expect(o.spec).to.include({ replicas: 1, color: 'red' });
    expect((o.spec as Obj).nested).to.deep.equal({ level: 'info' });
    const stored = obj({ replicas: 4 });
    vs.applyDefaults(stored);
    expect(stored.spec).to.include({ replicas: 4, color: 'red' });
  });

  it('defaults never override a value', () => {
    const o = obj({ replicas: 3, color: 'blue' });
    vs.normalize(o);
    expect(o.spec).to.include({ replicas: 3, color: 'blue' });
  });
});

describe('compiled CRD schema: value checks', () => {
  const vs = compileVersionSchema(schema);
  const check = (spec: Obj) => {
    const o = obj(spec);
    vs.normalize(o);
    return vs.validate(o);
  };

  it('accepts a valid object', () => {
    expect(check({ replicas: 2, ratio: 0.5, mode: 'Fast', size: '50%', when: '2024-01-02T03:04:05Z', addr: '10.0.0.1', tags: ['a'], ports: [{ name: 'http', port: 80 }], labels: { a: 'b' } })).to.deep.equal([]);
  });

  const cases: [string, Obj, string, string, RegExp?][] = [
    ['types', { replicas: 'two' }, 'spec.replicas', 'FieldValueTypeInvalid', /spec.replicas in body must be of type integer: "string"/],
    ['int-or-string', { size: true }, 'spec.size', 'FieldValueTypeInvalid', /must be of type integer,string: "boolean"/],
    ['minimum', { replicas: 0 }, 'spec.replicas', 'FieldValueInvalid', /^Invalid value: 0: spec.replicas in body should be greater than or equal to 1$/],
    ['maximum', { replicas: 11 }, 'spec.replicas', 'FieldValueInvalid', /should be less than or equal to 10/],
    ['exclusiveMaximum', { ratio: 1 }, 'spec.ratio', 'FieldValueInvalid', /should be less than 1$/],
    ['multipleOf', { ratio: 0.3 }, 'spec.ratio', 'FieldValueInvalid', /should be a multiple of 0.25/],
    ['minLength', { name: 'a' }, 'spec.name', 'FieldValueInvalid', /should be at least 2 chars long/],
    ['maxLength', { name: 'abcdefghi' }, 'spec.name', 'FieldValueTooLong', /^Too long: may not be more than 8 bytes$/],
    ['pattern', { name: 'ABC' }, 'spec.name', 'FieldValueInvalid', /should match '\^\[a-z\]\+\$'/],
    ['enum', { mode: 'Medium' }, 'spec.mode', 'FieldValueNotSupported', /supported values: "Fast", "Slow"/],
    ['date-time format', { when: 'yesterday' }, 'spec.when', 'FieldValueTypeInvalid', /must be of type date-time: "yesterday"/],
    ['ipv4 format', { addr: '300.1.1.1' }, 'spec.addr', 'FieldValueTypeInvalid', /must be of type ipv4/],
    ['minItems', { tags: [] }, 'spec.tags', 'FieldValueInvalid', /should have at least 1 items/],
    ['maxItems', { tags: ['a', 'b', 'c', 'd'] }, 'spec.tags', 'FieldValueTooMany', /must have at most 3 items/],
    ['list-type set', { tags: ['a', 'a'] }, 'spec.tags[1]', 'FieldValueDuplicate', /Duplicate value: "a"/],
    ['list-type map', { ports: [{ name: 'http', port: 80 }, { name: 'http', port: 81 }] }, 'spec.ports[1]', 'FieldValueDuplicate', /Duplicate value: {"name":"http"}/],
    ['maxProperties', { labels: { a: 'a', b: 'b', c: 'c' } }, 'spec.labels', 'FieldValueTooMany', /must have at most 2 items/],
    ['required', { name: undefined }, 'spec.name', 'FieldValueRequired', /^Required value$/],
    ['nullable', { nickname: null, replicas: 2 }, '', '', undefined],
    ['embedded resource apiVersion and kind', { template: { spec: {} } }, 'spec.template.apiVersion', 'FieldValueRequired', undefined],
    ['embedded resource metadata', { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a/b' } } }, 'spec.template.metadata.name', 'FieldValueInvalid', undefined],
  ];
  for (const [name, spec, field, reason, message] of cases) {
    it(name, () => {
      const causes = check(spec);
      if (!field) {
        expect(causes).to.deep.equal([]);
        return;
      }
      const cause = causes.find((c) => c.field === field && c.reason === reason);
      expect(cause, JSON.stringify(causes)).to.not.equal(undefined);
      if (message) expect(cause!.message).to.match(message);
    });
  }

  it('matches patterns in linear time (RE2), whatever the pattern', () => {
    const vs = compileVersionSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    const started = Date.now();
    const causes = vs.validate({ apiVersion: 'example.com/v1', kind: 'W', metadata: { name: 'w' }, s: `${'a'.repeat(5000)}b` } as ApiObject);
    expect(fields(causes)).to.deep.equal(['s FieldValueInvalid']);
    // A backtracking engine takes hours on this input.
    expect(Date.now() - started).to.be.below(2000);
  });

  it('does not refuse an update for values it leaves as they were (ratcheting)', () => {
    const old = obj({ replicas: 50, tags: ['a', 'a'] });
    expect(fields(vs.validate(obj({ replicas: 50, tags: ['a', 'a'], color: 'blue' }), old))).to.deep.equal([]);
    expect(fields(vs.validate(obj({ replicas: 60, tags: ['a', 'a'] }), old))).to.deep.equal(['spec.replicas FieldValueInvalid']);
    expect(fields(vs.validate(obj({ replicas: 5, tags: ['b', 'b'] }), obj({ replicas: 5, tags: ['a'] })))).to.deep.equal(['spec.tags[1] FieldValueDuplicate']);
  });

  it('checks metadata as ObjectMeta', () => {
    const o = obj();
    (o.metadata as Obj).labels = 'app=web';
    expect(fields(vs.validate(o))).to.include('metadata.labels FieldValueTypeInvalid');
  });

  it('validates a status write against the status schema', () => {
    const o = obj({}, { status: { ready: 'yes' } });
    expect(fields(vs.validateStatus(o, obj()))).to.deep.equal(['status.ready FieldValueTypeInvalid']);
    expect(vs.validateStatus(obj({}, { status: { ready: true } }), obj())).to.deep.equal([]);
  });
});

describe('compiled CRD schema: validation rules', () => {
  const ruled = (rules: Obj[], props: Obj = {}, extra: Obj = {}) => compileVersionSchema({
    type: 'object',
    properties: { spec: { type: 'object', 'x-svc-validations': rules, properties: { min: { type: 'integer' }, max: { type: 'integer' }, name: { type: 'string' }, ...props }, ...extra } },
  });
  const o = (spec: Obj) => ({ apiVersion: 'example.com/v1', kind: 'W', metadata: { name: 'w' }, spec }) as ApiObject;

  it('reports a failing rule with its message, or the rule when it has none', () => {
    const vs = ruled([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }, { rule: 'self.name != "x"' }]);
    const causes = vs.validate(o({ min: 5, max: 1, name: 'x' }));
    expect(causes).to.deep.equal([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": min must not exceed max', field: 'spec' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": failed rule: self.name != "x"', field: 'spec' },
    ]);
    expect(vs.validate(o({ min: 1, max: 5, name: 'y' }))).to.deep.equal([]);
  });

  it('uses messageExpression, reason and fieldPath', () => {
    const vs = ruled([{ rule: 'self.min >= 0', messageExpression: "'min is ' + string(self.min)", reason: 'FieldValueForbidden', fieldPath: '.min' },
      { rule: 'has(self.name)', reason: 'FieldValueRequired', message: 'name is needed', fieldPath: '.name' }]);
    expect(vs.validate(o({ min: -1 }))).to.deep.equal([
      { reason: 'FieldValueForbidden', message: 'Forbidden: min is -1', field: 'spec.min' },
      { reason: 'FieldValueRequired', message: 'Required value: name is needed', field: 'spec.name' },
    ]);
  });

  it('runs transition rules on updates only, unless optionalOldSelf', () => {
    const vs = ruled([{ rule: 'self.name == oldSelf.name', message: 'name is immutable' },
      { rule: "oldSelf.hasValue() || self.min == 0", optionalOldSelf: true, message: 'min starts at 0' }]);
    expect(vs.validate(o({ name: 'a', min: 0 }))).to.deep.equal([]);
    expect(fields(vs.validate(o({ name: 'a', min: 1 })))).to.deep.equal(['spec FieldValueInvalid']);
    expect(vs.validate(o({ name: 'b', min: 1 }), o({ name: 'a', min: 0 }))[0].message).to.equal('Invalid value: "object": name is immutable');
    expect(vs.validate(o({ name: 'a', min: 5 }), o({ name: 'a', min: 0 }))).to.deep.equal([]);
  });

  it('finds old items of list-type map lists by key', () => {
    const vs = ruled([], {
      items: {
        type: 'array', 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['k'],
        items: { type: 'object', required: ['k'], properties: { k: { type: 'string' }, v: { type: 'integer', 'x-svc-validations': [{ rule: 'self >= oldSelf', message: 'may only grow' }] } } },
      },
    });
    const old = o({ items: [{ k: 'a', v: 5 }, { k: 'b', v: 1 }] });
    expect(vs.validate(o({ items: [{ k: 'b', v: 2 }, { k: 'a', v: 6 }] }), old)).to.deep.equal([]);
    expect(fields(vs.validate(o({ items: [{ k: 'b', v: 0 }, { k: 'a', v: 6 }] }), old))).to.deep.equal(['spec.items[0].v FieldValueInvalid']);
  });

  it('types self from the schema (rules see defaults) and escapes property names', () => {
    const vs = ruled([{ rule: "self.x__dash__y == 'd'" }], { 'x-y': { type: 'string', default: 'd' } });
    const obj1 = o({});
    vs.normalize(obj1);
    expect(vs.validate(obj1)).to.deep.equal([]);
  });

  it('does not refuse an update for a rule on a value it leaves as it was', () => {
    const vs = ruled([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }]);
    const old = o({ min: 5, max: 1, name: 'a' });
    expect(vs.validate(o({ min: 5, max: 1, name: 'a' }), old)).to.deep.equal([]);
    expect(vs.validate(o({ min: 6, max: 1, name: 'a' }), old)).to.have.length(1);
  });

  it('skips the rules when the object has blocking schema errors', () => {
    const vs = ruled([{ rule: 'self.min > 0' }]);
    expect(vs.validate(o({ min: 'x' }))).to.deep.equal([
      { reason: 'FieldValueTypeInvalid', message: 'Invalid value: "string": spec.min in body must be of type integer: "string"', field: 'spec.min' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation', field: '<nil>' },
    ]);
  });

  it('stops at the per-call runtime cost limit', () => {
    const vs = ruled([{ rule: 'self.list.all(x, self.list.all(y, x != y || x == y))' }, { rule: 'self.min > 0' }], { list: { type: 'array', items: { type: 'integer' } } });
    // (A CRD with this rule is refused for its estimated cost; served anyway, it stays bounded at run time.)
    const list = Array.from({ length: 2000 }, (_, i) => i);
    const causes = vs.validate(o({ list, min: 0 }));
    expect(causes).to.have.length(1);
    expect(causes[0].message).to.contain('no further validation rules will be run due to call cost exceeds limit for rule: self.list.all');
  });

  it('compiles the rules once per version schema', () => {
    const vs = ruled([{ rule: 'self.min <= self.max' }]);
    for (let i = 0; i < 3; i++) expect(vs.validate(o({ min: 1, max: 2 }))).to.deep.equal([]);
    expect(vs.validate(o({ min: 3, max: 2 }))).to.have.length(1);
  });

  it('refuses values of a node whose stored rule no longer compiles, as the platform does', () => {
    const vs = ruled([{ rule: 'self.nothing == 1' }, { rule: 'self.min > 0' }]);
    const causes = vs.validate(o({ min: 0 }));
    expect(fields(causes)).to.deep.equal(['spec FieldValueInvalid', 'spec FieldValueInvalid']);
    expect(causes[0].message).to.match(/^Invalid value: "object": rule compile error: compilation failed: ERROR: <input>:1:\d+: undefined field 'nothing'/);
    expect(causes[1].message).to.equal('Invalid value: "object": failed rule: self.min > 0');
  });

  it('places a failure at a fieldPath naming a map key right after the map', () => {
    const vs = ruled([], { labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-svc-validations': [{ rule: "self['app'] != 'x'", fieldPath: "['app']" }] } });
    expect(fields(vs.validate(o({ labels: { app: 'x' } })))).to.deep.equal(['spec.labels[app] FieldValueInvalid']);
  });

  it('answers a rule that fails at run time with a cause at its node, and runs the next rules', () => {
    const vs = ruled([{ rule: 'self.max / self.min > 0' }, { rule: 'self.min < 0' }]);
    expect(vs.validate(o({ min: 0, max: 1 }))).to.deep.equal([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": division by zero evaluating rule: self.max / self.min > 0', field: 'spec' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": failed rule: self.min < 0', field: 'spec' },
    ]);
  });

  it('compiles a stored schema nested too deep for its walks into one that refuses writes, without throwing', () => {
    let deep: Obj = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'object', properties: { a: deep } };
    const vs = compileVersionSchema(deep);
    const obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, a: {} } as ApiObject;
    expect(vs.normalize(obj)).to.deep.equal({ causes: [], unknownFields: [] });
    expect(fields(vs.validate(obj))).to.deep.equal([' FieldValueForbidden']);
    expect(vs.validate(obj)[0].message).to.contain('nests more than 256 levels deep');
  });
});

describe('CEL gaps the CRD rules need', () => {
  it('refuses out-of-range int literals at compile time, accepts the smallest int', () => {
    expect(() => compile('9223372036854775808 > 0')).to.throw(/invalid int literal/);
    expect(() => compile('x < 99999999999999999999', { variables: ['x'] })).to.throw(/invalid int literal/);
    expect(compile('-9223372036854775808 < 0').evaluate({}).value).to.equal(true);
  });

  it('converts a duration to its nanoseconds with int()', () => {
    expect(compile("int(duration('1.5s')) == 1500000000").evaluate({}).value).to.equal(true);
  });

  it('reads RE2 inline flags in the middle of a pattern', () => {
    expect(compile("'aB'.matches('^a(?i)b$')").evaluate({}).value).to.equal(true);
    expect(compile("'AB'.matches('^a(?i)b$')").evaluate({}).value).to.equal(false);
    expect(compile("'xAb'.matches('x(?i:a)b')").evaluate({}).value).to.equal(true);
    expect(compile("'xAB'.matches('x(?i:a)b')").evaluate({}).value).to.equal(false);
  });

  it('runs regexes in linear time (RE2), whatever the pattern', () => {
    const started = Date.now();
    expect(compile("s.matches('^(a+)+$')", { variables: ['s'] }).evaluate({ s: `${'a'.repeat(5000)}b` }).value).to.equal(false);
    // A backtracking engine takes hours on this input.
    expect(Date.now() - started).to.be.below(2000);
  });

  it('has the IP and CIDR library of release 1.31', () => {
    const value = (e: string) => compile(e).evaluate({}).value;
    expect(value("isIP('10.0.0.1') && isIP('2001:db8::1') && !isIP('10.0.0.01') && !isIP('::ffff:1.2.3.4') && !isIP('example.com')")).to.equal(true);
    expect(value("ip('2001:db8::1').family()")).to.equal(6n);
    expect(value("string(ip('2001:0db8:0:0:0:0:0:1'))")).to.equal('2001:db8::1');
    expect(value("cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))")).to.equal(true);
    expect(value("string(cidr('10.1.2.3/8').masked()) + ' ' + string(cidr('10.1.2.3/8').prefixLength())")).to.equal('10.0.0.0/8 8');
    expect(() => compile("isIP('1.2.3.4')", { release: '1.30' })).to.throw(/introduced in release 1.31/);
    expect(() => value("ip('nope')")).to.throw(/parse error/);
  });

  it('answers -1 for indexOf with an offset past the end', () => {
    expect(compile("'abc'.indexOf('c', 3)").evaluate({}).value).to.equal(-1n);
    expect(compile("'abc'.indexOf('c', 10)").evaluate({}).value).to.equal(-1n);
    expect(compile("'abcabc'.indexOf('c', 3)").evaluate({}).value).to.equal(5n);
  });
});
