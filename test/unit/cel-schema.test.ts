import { expect } from 'chai';
import {
  compile, EMBEDDED_RESOURCE, escapeProperty, INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS, type Schema, stringifyValue, unescapeProperty,
} from '../../internal/cel/index.js';

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };

const schema: Schema = {
  type: 'object',
  properties: {
    replicas: int,
    ratio: { type: 'number' },
    enabled: { type: 'boolean' },
    name: str,
    tags: { type: 'array', items: str },
    ports: { type: 'array', items: { type: 'object', properties: { name: str, port: int } } },
    labels: { type: 'object', additionalProperties: str },
    limits: { type: 'object', additionalProperties: int },
    size: { [INT_OR_STRING]: true },
    extra: { type: 'object', [PRESERVE_UNKNOWN_FIELDS]: true },
    template: { type: 'object', [EMBEDDED_RESOURCE]: true, properties: { spec: { type: 'object', properties: { image: str } } } },
    created: { type: 'string', format: 'date-time' },
    timeout: { type: 'string', format: 'duration' },
    payload: { type: 'string', format: 'byte' },
    'x-prop': str,
    'redact__d': str,
    namespace: str,
    'a.b/c': int,
  },
};

const self = {
  replicas: 3, ratio: 0.5, enabled: true, name: 'web', tags: ['a', 'b'],
  ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }],
  labels: { app: 'web' }, limits: { cpu: 2 }, size: '50%', extra: { anything: { goes: [1, 'x'] } },
  template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', uid: 'u' }, spec: { image: 'nginx' } },
  created: '2024-05-06T07:08:09Z', timeout: '1m30s', payload: 'aGk=',
  'x-prop': 'dash', redact__d: 'under', namespace: 'ns', 'a.b/c': 7,
};

function value(expr: string, vars: Record<string, unknown> = { self }, s: Schema = schema): unknown {
  return JSON.parse(stringifyValue(compile(expr, { schema: s }).evaluate(vars).value));
}

describe('cel property name escaping', () => {
  it('escapes reserved words and special characters', () => {
    expect(escapeProperty('namespace')).to.equal('__namespace__');
    expect(escapeProperty('x-prop')).to.equal('x__dash__prop');
    expect(escapeProperty('redact__d')).to.equal('redact__underscores__d');
    expect(escapeProperty('a.b/c')).to.equal('a__dot__b__slash__c');
    expect(escapeProperty('plain_name')).to.equal('plain_name');
  });

  it('leaves names it cannot express undefined', () => {
    expect(escapeProperty('1st')).to.equal(undefined);
    expect(escapeProperty('has space')).to.equal(undefined);
    expect(escapeProperty('')).to.equal(undefined);
  });

  it('unescapes back to the property name', () => {
    for (const name of ['namespace', 'x-prop', 'redact__d', 'a.b/c', 'if', '___']) {
      expect(unescapeProperty(escapeProperty(name)!)).to.equal(name);
    }
    expect(unescapeProperty('__unknown__')).to.equal('__unknown__');
  });

  it('reads escaped properties of typed objects', () => {
    expect(value('self.x__dash__prop')).to.equal('dash');
    expect(value('self.redact__underscores__d')).to.equal('under');
    expect(value('self.__namespace__')).to.equal('ns');
    expect(value('self.a__dot__b__slash__c')).to.equal(7);
    expect(() => compile('self.namespace', { schema })).to.throw("undefined field 'namespace'");
  });
});

describe('cel types from schemas', () => {
  it('types scalars, lists and objects', () => {
    expect(value('self.replicas + 1')).to.equal(4);
    expect(value('self.ratio * 2.0')).to.equal(1);
    expect(value('self.enabled && self.name == "web"')).to.equal(true);
    expect(value('self.tags.size()')).to.equal(2);
    expect(value('self.ports.map(p, p.port)')).to.deep.equal([80, 443]);
    expect(value('self.ports[1].name')).to.equal('https');
  });

  it('types maps from additionalProperties', () => {
    expect(value("self.labels['app']")).to.equal('web');
    expect(value('self.limits.cpu + 1')).to.equal(3);
    expect(value('self.limits.all(k, self.limits[k] > 0)')).to.equal(true);
  });

  it('finds type errors when the rule is compiled', () => {
    expect(() => compile("self.replicas + 'x'", { schema })).to.throw('no such overload: int + string');
    expect(() => compile('self.missing', { schema })).to.throw("undefined field 'missing'");
    expect(() => compile('self.ports.map(p, p.nope)', { schema })).to.throw("undefined field 'nope'");
    expect(() => compile('self.tags.all(t, t > 1)', { schema })).to.throw('no such overload');
  });

  it('keeps int-or-string and preserved unknown fields dynamic', () => {
    expect(value('type(self.size) == string && self.size.endsWith("%")')).to.equal(true);
    expect(value('self.size < 5', { self: { size: 3 } })).to.equal(true);
    expect(value('self.extra.anything.goes[1]')).to.equal('x');
  });

  it('gives embedded resources and resource roots apiVersion, kind and metadata', () => {
    expect(value("self.template.kind + '/' + self.template.metadata.name + ':' + self.template.spec.image")).to.equal('Pod/p:nginx');
    expect(() => compile('self.template.metadata.uid', { schema })).to.throw("undefined field 'uid'");
    const root = compile('self.apiVersion + self.metadata.generateName', { schema: { type: 'object' }, resourceRoot: true });
    expect(root.evaluate({ self: { apiVersion: 'v1', metadata: { generateName: 'x-' } } }).value).to.equal('v1x-');
  });

  it('converts formatted strings to timestamps, durations and bytes', () => {
    expect(value('self.created.getFullYear()')).to.equal(2024);
    expect(value('string(self.created)', { self: { ...self, created: '2024-01-02T03:04:05.000000123+01:00' } }))
      .to.equal('2024-01-02T02:04:05.000000123Z');
    expect(value("self.timeout == duration('90s')")).to.equal(true);
    expect(value('string(self.payload)')).to.equal('hi');
  });

  it('compares typed objects for equality in transition rules', () => {
    const vars = { self, oldSelf: { ...self, replicas: 3.0 } };
    expect(value('self == oldSelf', vars)).to.equal(true);
    expect(value('self.ports == oldSelf.ports', vars)).to.equal(true);
    expect(value('self == oldSelf', { self, oldSelf: { ...self, name: 'other' } })).to.equal(false);
  });

  it('treats absent and null fields as unset', () => {
    expect(value('has(self.name)', { self: { name: null } })).to.equal(false);
    expect(value('has(self.name)', { self: { name: 'x' } })).to.equal(true);
    expect(value("self.?name.orValue('none')", { self: {} })).to.equal('none');
  });

  it('types the fixed variables of the other rule kinds', () => {
    const user = compile("user.username == 'alice' && 'dev' in user.groups && user.extra['scope'][0] == 'x'", { variables: ['user'] });
    expect(user.evaluate({ user: { username: 'alice', groups: ['dev'], extra: { scope: ['x'] } } }).value).to.equal(true);
    expect(() => compile('user.name', { variables: ['user'] })).to.throw("undefined field 'name'");
    const request = compile("request.resourceAttributes.verb == 'get'", { variables: ['request'] });
    expect(request.evaluate({ request: { resourceAttributes: { verb: 'get' } } }).value).to.equal(true);
    const claims = compile("claims.sub + ':' + string(claims.exp)", { variables: ['claims'] });
    expect(claims.evaluate({ claims: { sub: 'me', exp: 17 } }).value).to.equal('me:17');
  });
});
