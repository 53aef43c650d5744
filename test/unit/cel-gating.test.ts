import { expect } from 'chai';
import { compile, CompileError, SERVING_RELEASE } from '../../internal/cel/index.js';

describe('cel release gating', () => {
  const newer = [
    ["quantity('1Gi') == quantity('1024Mi')", 'function quantity'],
    ["isQuantity('1Gi')", 'function isQuantity'],
    ["{'a': 1}.?a.orValue(0) == 1", 'optional types'],
    ['optional.of(1).hasValue()', 'optional types'],
    ['[?optional.of(1)] == [1]', 'optional types'],
    ["{?'a': optional.none()} == {}", 'optional types'],
    ['optional.of(1).optMap(x, x + 1).value() == 2', 'optional types'],
    ['1 < 1.5', 'cross-type numeric comparisons'],
  ];

  it('serves release 1.34', () => {
    expect(SERVING_RELEASE).to.equal('1.34');
  });

  for (const [expr, feature] of newer) {
    it(`rejects ${feature} for a server older than 1.29: ${expr}`, () => {
      expect(() => compile(expr, { release: '1.28' })).to.throw(CompileError,
        `${feature} was introduced in release 1.29 and is not available in release 1.28`);
      expect(compile(expr, { release: '1.29' }).evaluate({}).value).to.equal(true);
      expect(compile(expr).evaluate({}).value).to.equal(true);
    });
  }

  it('accepts what every release has', () => {
    const oldest = '1.0';
    for (const expr of [
      "'a-b'.split('-').join('') == 'ab'", '[2, 1].max() == 2', "'abc'.find('b') == 'b'",
      "url('https://x/').getHost() == 'x'", '[1, 2].all(x, x > 0)', '1 < 2',
    ]) expect(compile(expr, { release: oldest }).evaluate({}).value, expr).to.equal(true);
  });

  it('keeps stored rules evaluating after a rollback', () => {
    const stored = compile("quantity('2Gi').isGreaterThan(quantity('1Gi'))", { release: '1.28', stored: true });
    expect(stored.evaluate({}).value).to.equal(true);
  });

  it('rejects releases that are not MAJOR.MINOR', () => {
    expect(() => compile('1 < 2', { release: 'latest' })).to.throw('invalid release');
  });
});

describe('cel compile cache', () => {
  const schema = (type: string) => ({ type: 'object', properties: { x: { type } } });

  it('compiles an expression once per declarations', () => {
    expect(compile('self.x + 1', { schema: schema('integer') })).to.equal(compile('self.x + 1', { schema: schema('integer') }));
    expect(compile('1 + 1')).to.equal(compile('1 + 1'));
  });

  it('keys the cache by schema as well as expression', () => {
    expect(compile('self.x == self.x', { schema: schema('integer') }).outputType).to.equal('bool');
    expect(compile('self.x + 1', { schema: schema('integer') }).evaluate({ self: { x: 1 } }).value).to.equal(2n);
    expect(() => compile('self.x + 1', { schema: schema('string') })).to.throw('no such overload: string + int');
  });

  it('still gates a cached program by the release asked for', () => {
    compile('optional.none().hasValue()');
    expect(() => compile('optional.none().hasValue()', { release: '1.28' })).to.throw(CompileError);
  });
});
