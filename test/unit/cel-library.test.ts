import { expect } from 'chai';
import {
  type AuthorizationAttributes, compile, CompileError, type CompileOptions, EvalError, stringifyValue,
} from '../../internal/cel/index.js';

/** The result of an expression as JSON (ints as numbers). */
function value(expr: string, vars: Record<string, unknown> = {}, opts: CompileOptions = {}): unknown {
  return JSON.parse(stringifyValue(compile(expr, opts).evaluate(vars).value));
}

function evalError(expr: string, vars: Record<string, unknown> = {}, opts: CompileOptions = {}): string {
  try {
    compile(expr, opts).evaluate(vars);
  } catch (err) {
    expect(err).to.be.instanceOf(EvalError);
    return (err as Error).message;
  }
  throw new Error(`${expr} evaluated without error`);
}

describe('cel strings library', () => {
  it('charAt counts code points and allows the end index', () => {
    expect(value("'a😀b'.charAt(1)")).to.equal('😀');
    expect(value("'a😀b'.charAt(3)")).to.equal('');
    expect(evalError("'abc'.charAt(-1)")).to.include('index out of range: -1');
  });

  it('indexOf and lastIndexOf count code points', () => {
    expect(value("'😀abcabc'.indexOf('bc')")).to.equal(2);
    expect(value("'😀abcabc'.lastIndexOf('bc')")).to.equal(5);
    expect(value("'abc'.indexOf('', 2)")).to.equal(2);
    expect(evalError("'abc'.lastIndexOf('a', 3)")).to.include('index out of range: 3');
  });

  it('lowerAscii and upperAscii change ASCII letters only', () => {
    expect(value("'ÀÉ Hello'.lowerAscii()")).to.equal('ÀÉ hello');
    expect(value("'àé hello'.upperAscii()")).to.equal('àé HELLO');
    expect(value("''.upperAscii()")).to.equal('');
  });

  it('replace replaces all or the first n occurrences, an empty pattern between code points', () => {
    expect(value("'aaaa'.replace('a', 'b')")).to.equal('bbbb');
    expect(value("'aaaa'.replace('a', 'b', 2)")).to.equal('bbaa');
    expect(value("'ab'.replace('', '-')")).to.equal('-a-b-');
    expect(value("'ab'.replace('a', 'b', 0)")).to.equal('ab');
  });

  it('split limits the number of parts', () => {
    expect(value("'a,b,c'.split(',')")).to.deep.equal(['a', 'b', 'c']);
    expect(value("'a,b,c'.split(',', 2)")).to.deep.equal(['a', 'b,c']);
    expect(value("'a😀'.split('')")).to.deep.equal(['a', '😀']);
    expect(value("''.split(',')")).to.deep.equal(['']);
  });

  it('substring takes code point ranges and rejects bad ones', () => {
    expect(value("'a😀bc'.substring(1, 3)")).to.equal('😀b');
    expect(evalError("'abc'.substring(-1)")).to.include('index out of range: -1');
    expect(evalError("'abc'.substring(1, 4)")).to.include('index out of range: 4');
  });

  it('trim removes Unicode white space but not zero-width characters', () => {
    expect(value("'\\u00a0 x \\u3000'.trim()")).to.equal('x');
    expect(value("'\\u200bx'.trim()")).to.equal('\u200bx');
  });

  it('join concatenates strings with an optional separator', () => {
    expect(value("['a', 'b'].join()")).to.equal('ab');
    expect(value("['a', 'b'].join(', ')")).to.equal('a, b');
    expect(evalError("dyn([1]).join()")).to.include('join');
  });
});

describe('cel lists library', () => {
  it('isSorted compares elements of any comparable type', () => {
    expect(value('[1, 2, 2, 3].isSorted()')).to.equal(true);
    expect(value("['b', 'a'].isSorted()")).to.equal(false);
    expect(value('[].isSorted()')).to.equal(true);
  });

  it('sum adds numbers and durations, starting from zero', () => {
    expect(value('[1, 3].sum()')).to.equal(4);
    expect(value('[1.5, 2.0].sum()')).to.equal(3.5);
    expect(value("[duration('1m'), duration('1s')].sum() == duration('61s')")).to.equal(true);
    expect(value('[].sum()')).to.equal(0);
    expect(evalError('[9223372036854775807, 1].sum()')).to.include('overflow');
  });

  it('min and max pick extremes and fail on empty lists', () => {
    expect(value('[3, 1, 2].min()')).to.equal(1);
    expect(value("['b', 'c', 'a'].max()")).to.equal('c');
    expect(evalError('[].max()')).to.include('max called on empty list');
  });

  it('indexOf and lastIndexOf find equal elements', () => {
    expect(value('[1, 2, 2, 3].indexOf(2)')).to.equal(1);
    expect(value("['a', 'b', 'b'].lastIndexOf('b')")).to.equal(2);
    expect(value('[1.0].indexOf(1.1)')).to.equal(-1);
    expect(value('[[1], [2]].indexOf([2])')).to.equal(1);
  });
});

describe('cel regex library', () => {
  it('find returns the first match or the empty string', () => {
    expect(value("'abc 123'.find('[0-9]+')")).to.equal('123');
    expect(value("'abc 123'.find('xyz')")).to.equal('');
  });

  it('findAll returns successive matches, limited when asked', () => {
    expect(value("'123 abc 456'.findAll('[0-9]+')")).to.deep.equal(['123', '456']);
    expect(value("'123 abc 456'.findAll('[0-9]+', 1)")).to.deep.equal(['123']);
    expect(value("'ab'.findAll('x*')")).to.deep.equal(['', '', '']);
    expect(value("'123 abc 456'.findAll('xyz')")).to.deep.equal([]);
  });

  it('matches uses RE2 syntax', () => {
    expect(value("'ABC'.matches('(?i)^abc$')")).to.equal(true);
    expect(value("'a\\nb'.matches('^a.b$')")).to.equal(false);
    expect(value("'a\\nb'.matches('(?s)^a.b$')")).to.equal(true);
    expect(value("'x-y'.matches('^\\\\Qx-y\\\\E\\\\z')")).to.equal(true);
    expect(value("'ab1'.matches('^[[:alpha:]]+[[:digit:]]$')")).to.equal(true);
    expect(value("'é'.matches('^\\\\pL$')")).to.equal(true);
  });

  it('rejects what RE2 does not support', () => {
    const dynamic = (pattern: string) => evalError('s.matches(p)', { s: 'abc', p: pattern }, { variables: ['s', 'p'] });
    expect(dynamic('a(?=b)')).to.include('error parsing regexp');
    expect(dynamic('(a)\\1')).to.include('error parsing regexp');
    expect(dynamic('a{1001}')).to.include('invalid repeat count');
  });
});

describe('cel url library', () => {
  it('parses absolute URIs and absolute paths', () => {
    expect(value("url('https://user:pass@example.com:80/path?query=val#fragment').getHost()")).to.equal('example.com:80');
    expect(value("url('/absolute-path').getEscapedPath()")).to.equal('/absolute-path');
    expect(value("isURL('../relative-path')")).to.equal(false);
    expect(value("isURL('https://a:b:c/')")).to.equal(false);
    expect(evalError("url('../relative-path')")).to.include('URL parse error');
  });

  it('returns the parts of a URL', () => {
    expect(value("url('/path').getScheme()")).to.equal('');
    expect(value("url('HTTPS://example.com/').getScheme()")).to.equal('https');
    expect(value("url('https://[::1]:80/').getHost()")).to.equal('[::1]:80');
    expect(value("url('https://[::1]:80/').getHostname()")).to.equal('::1');
    expect(value("url('https://example.com:80/').getPort()")).to.equal('80');
    expect(value("url('https://example.com/').getPort()")).to.equal('');
    expect(value("url('https://example.com/path with spaces/').getEscapedPath()")).to.equal('/path%20with%20spaces/');
    expect(value("url('https://example.com').getEscapedPath()")).to.equal('');
  });

  it('returns the query in matrix form', () => {
    expect(value("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()")).to.deep.equal({ k1: ['a'], k2: ['b', 'c'] });
    expect(value("url('https://example.com/path?key+with+spaces=value%20x').getQuery()")).to.deep.equal({ 'key with spaces': ['value x'] });
    expect(value("url('https://example.com/path?').getQuery()")).to.deep.equal({});
  });
});

describe('cel quantity library', () => {
  it('parses quantities and rejects malformed ones', () => {
    expect(value("isQuantity('1.3Gi')")).to.equal(true);
    expect(value("isQuantity('200K')")).to.equal(false);
    expect(value("isQuantity('Mi')")).to.equal(false);
    expect(evalError("quantity('10Mo')")).to.include('quantities must match the regular expression');
    expect(evalError("quantity('10Mm')")).to.include("unable to parse quantity's suffix");
  });

  it('compares exactly across decimal and binary suffixes', () => {
    expect(value("quantity('200M') == quantity('0.2G')")).to.equal(true);
    expect(value("quantity('50M').compareTo(quantity('50Mi'))")).to.equal(-1);
    expect(value("quantity('150Mi').isGreaterThan(quantity('100Mi'))")).to.equal(true);
    expect(value("quantity('50M').isLessThan(quantity('100M'))")).to.equal(true);
  });

  it('adds and subtracts quantities and integers', () => {
    expect(value("quantity('50k').add(quantity('20')) == quantity('50.02k')")).to.equal(true);
    expect(value("quantity('50k').sub(20) == quantity('49980')")).to.equal(true);
    expect(value("quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()")).to.equal(20);
  });

  it('converts to numbers', () => {
    expect(value("quantity('50.703k').asApproximateFloat()")).to.equal(50703);
    expect(value("quantity('50').isInteger()")).to.equal(true);
    expect(value("quantity('1.5').isInteger()")).to.equal(false);
    expect(value("quantity('-1Ki').sign()")).to.equal(-1);
    expect(evalError("quantity('9999999999999999999999999999999999999G').asInteger()")).to.include('cannot convert value to integer');
  });

  it('rounds below a nano up and prints canonical text', () => {
    expect(value("quantity('0.0000000001') == quantity('1n')")).to.equal(true);
    expect(value("quantity('1.5Gi')")).to.equal('1536Mi');
    expect(value("quantity('1.5')")).to.equal('1500m');
  });
});

describe('cel authorizer library', () => {
  const asked: AuthorizationAttributes[] = [];
  const authorizer = {
    user: { name: 'alice', groups: ['dev'] },
    authorize(attrs: AuthorizationAttributes) {
      asked.push(attrs);
      if (attrs.resource === 'secrets') throw new Error('webhook unavailable');
      return attrs.verb === 'get' ? { decision: 'allow' as const, reason: 'rbac' } : { decision: 'deny' as const, reason: 'no rule' };
    },
  };
  const check = (expr: string) => value(expr, { authorizer }, { variables: ['authorizer'] });

  beforeEach(() => { asked.length = 0; });

  it('checks resources with every attribute set', () => {
    expect(check("authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('web').check('get').allowed()")).to.equal(true);
    expect(asked[0]).to.deep.include({
      verb: 'get', resourceRequest: true, apiGroup: 'apps', apiVersion: '*', resource: 'deployments',
      subresource: 'scale', namespace: 'ns', name: 'web', user: authorizer.user,
    });
    expect(check("authorizer.group('').resource('pods').check('delete').reason()")).to.equal('no rule');
  });

  it('checks non-resource paths and service accounts', () => {
    expect(check("authorizer.path('/healthz').check('get').allowed()")).to.equal(true);
    expect(asked[0]).to.deep.include({ resourceRequest: false, path: '/healthz' });
    check("authorizer.serviceAccount('default', 'builder').group('').resource('pods').check('list').allowed()");
    expect(asked[1].user.name).to.equal('system:serviceaccount:default:builder');
  });

  it('reports authorizer errors as decisions and rejects bad arguments', () => {
    expect(check("authorizer.group('').resource('secrets').check('get').errored()")).to.equal(true);
    expect(check("authorizer.group('').resource('secrets').check('get').error()")).to.equal('webhook unavailable');
    expect(evalError("authorizer.path(' ')", { authorizer }, { variables: ['authorizer'] })).to.include('path must not be empty');
    expect(evalError("authorizer.serviceAccount('Not_Valid', 'x')", { authorizer }, { variables: ['authorizer'] })).to.include('Invalid service account namespace');
  });
});

describe('cel optional types', () => {
  it('selects fields that may be absent', () => {
    expect(value("{'a': 1}.?b.orValue(0)")).to.equal(0);
    expect(value("{'a': {'b': 2}}.?a.?b.value()")).to.equal(2);
    expect(value('[1][?0].hasValue()')).to.equal(true);
  });

  it('builds optional values', () => {
    expect(value('optional.of(1).or(optional.of(2)).value()')).to.equal(1);
    expect(value('optional.ofNonZeroValue([]).hasValue()')).to.equal(false);
    expect(value('optional.ofNonZeroValue({}).hasValue()')).to.equal(false);
    expect(evalError('optional.none().value()')).to.include('not present');
  });

  it('leaves empty optional entries out of list and map literals', () => {
    const m = { a: 1 };
    const opts = { variables: ['m'] };
    expect(value("[0, ?m[?'a'], ?m[?'b'], 3]", { m }, opts)).to.deep.equal([0, 1, 3]);
    expect(value("{'x': 0, ?'a': m[?'a'], ?'b': m[?'b']}", { m }, opts)).to.deep.equal({ x: 0, a: 1 });
    expect(value('[?optional.none()]')).to.deep.equal([]);
    expect(compile("[?m[?'a']]", opts).outputType).to.equal('list');
    expect(compile("[?optional.of('s')]").outputType).to.equal('list<string>');
  });

  it('requires optional values in optional entries', () => {
    expect(() => compile('[1, ?2]')).to.throw(CompileError, "ERROR: <input>:1:6: expected type 'optional<int>' but found 'int'");
    expect(() => compile("{?'a': 'x'}")).to.throw(CompileError, "expected type 'optional<string>' but found 'string'");
    expect(() => compile("[1, ?optional.of('x')]")).to.throw(CompileError, 'List elements must have the same type');
    expect(evalError('[?dyn(1)]')).to.include("cannot initialize optional entry from non-optional value of type 'int'");
  });

  it('maps present values with optMap and optFlatMap', () => {
    const m = { a: 'xyz' };
    const opts = { variables: ['m'] };
    expect(value("m[?'a'].optMap(s, s.size()).orValue(-1)", { m }, opts)).to.equal(3);
    expect(value("m[?'b'].optMap(s, s.size()).orValue(-1)", { m }, opts)).to.equal(-1);
    expect(value("m[?'a'].optFlatMap(s, optional.ofNonZeroValue(s.substring(3))).hasValue()", { m }, opts)).to.equal(false);
    expect(compile("optional.of('a').optMap(s, s.size())").outputType).to.equal('optional<int>');
  });

  it('rejects optMap and optFlatMap misuse when compiled', () => {
    expect(() => compile('optional.of(1).optMap(1, 2)')).to.throw(CompileError, 'optMap() variable name must be a simple identifier');
    expect(() => compile('optional.of(1).optFlatMap(x, x + 1)')).to.throw(CompileError, "expression must be optional, got 'int'");
    expect(() => compile('1.optMap(x, x)')).to.throw(CompileError, "receiver must be optional, got 'int'");
    expect(() => compile("optional.of(1).optMap(x, x + 'a')")).to.throw(CompileError, 'no such overload: int + string');
  });

  it('compares optionals and names their type', () => {
    expect(value('optional.of(1) == optional.of(1) && optional.none() != optional.of(1)')).to.equal(true);
    expect(value('[optional.of(1)] == [optional.of(2)]')).to.equal(false);
    expect(value('type(optional.none()) == optional_type')).to.equal(true);
  });

  it('is an error to select a field of a present value that has none', () => {
    expect(evalError("{'k': dyn(0)}[?'k'].f.hasValue()")).to.equal('no such key: f');
    expect(value("{'k': {}}[?'k'].f.hasValue()")).to.equal(false);
    expect(value('has({}.?x.y)')).to.equal(false);
  });
});

describe('cel timestamps and durations', () => {
  it('keep nanoseconds through parsing, arithmetic, comparison and printing', () => {
    expect(value("string(timestamp('2024-05-01T10:00:00.123456789Z'))")).to.equal('2024-05-01T10:00:00.123456789Z');
    expect(value("string(timestamp('2024-05-01T10:00:00.000000001Z') + duration('999999999ns'))")).to.equal('2024-05-01T10:00:01Z');
    expect(value("timestamp('2024-05-01T10:00:00.000000002Z') > timestamp('2024-05-01T10:00:00.000000001Z')")).to.equal(true);
    expect(value("timestamp('2024-05-01T10:00:00.000000002Z') - timestamp('2024-05-01T10:00:00Z') == duration('2ns')")).to.equal(true);
    expect(value("[timestamp('2024-05-01T10:00:00.000000001Z')] == [timestamp('2024-05-01T10:00:00Z')]")).to.equal(false);
    expect(value("timestamp('2024-05-01T10:00:00.000000001Z')")).to.equal('2024-05-01T10:00:00.000000001Z');
    expect(value("string(timestamp('2024-05-01T10:00:00.000000001+14:00'))")).to.equal('2024-04-30T20:00:00.000000001Z');
  });

  it('keep one representation of negative durations', () => {
    expect(value("duration('-1.5s') == duration('-2s') + duration('500ms')")).to.equal(true);
    expect(value("string(duration('1s') - duration('1500ms'))")).to.equal('-0.5s');
  });

  it('report values out of range while the expression runs', () => {
    expect(evalError("duration('5000000000s') + duration('5000000000s')")).to.equal('duration out of range');
    expect(evalError("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')")).to.equal('timestamp out of range');
    expect(() => compile("duration('9300000000s')")).to.throw(CompileError, 'invalid duration');
  });

  it('read UTC offsets as time zones', () => {
    expect(value("timestamp('2009-02-13T23:31:30Z').getHours('+05:30')")).to.equal(5);
    expect(value("timestamp('2009-02-13T23:31:30Z').getMinutes('-02:30')")).to.equal(1);
  });
});

describe('cel standard environment', () => {
  it('uses UTC as the default time zone', () => {
    expect(value("timestamp('2024-01-01T23:30:00-02:00').getDate()")).to.equal(2);
    expect(value("timestamp('2024-01-01T23:30:00-02:00').getHours()")).to.equal(1);
  });

  it('requires one element type in aggregate literals, where dyn elements fit any', () => {
    expect(value("[1, dyn('a')]")).to.deep.equal([1, 'a']);
    expect(value("{'a': dyn(1), 'b': 'x'}.b")).to.equal('x');
    expect(() => compile("[1, 'a']")).to.throw("List elements must have the same type, expected type 'int' but found 'string'");
    expect(() => compile("{'a': 1, 2: 1}")).to.throw('Map key uses wrong type');
    expect(() => compile("[[1], ['a']]")).to.throw('List elements must have the same type');
  });

  it('reports undeclared variables and type errors with their position', () => {
    expect(() => compile('1 + \n  foo')).to.throw("ERROR: <input>:2:3: undeclared reference to 'foo'");
    expect(() => compile("1 + 'a'")).to.throw('ERROR: <input>:1:1: no such overload: int + string');
  });
});
