import { expect } from 'chai';
import {
  compile, CompileError, CostBudget, CostLimitError, type Schema, STATIC_ESTIMATED_COST_LIMIT,
} from '../../internal/cel/index.js';

const cost = (expr: string, vars: Record<string, unknown> = {}, schema?: Schema): number =>
  compile(expr, { schema, variables: Object.keys(vars).filter((k) => k !== 'self') }).evaluate(vars).cost;

const replicasSchema: Schema = { type: 'object', properties: { replicas: { type: 'integer' }, maxReplicas: { type: 'integer' } } };

describe('cel runtime cost', () => {
  it('charges the published unit costs', () => {
    expect(cost('1 < 2'), 'comparison').to.equal(1);
    expect(cost('[1, 2, 3]'), 'list literal').to.equal(40);
    expect(cost("{'a': 1}"), 'map literal').to.equal(30);
    expect(cost('true || false'), 'constants and logic').to.equal(0);
    expect(cost('self.replicas <= self.maxReplicas', { self: { replicas: 1, maxReplicas: 2 } }, replicasSchema)).to.equal(5);
  });

  it('charges string functions by length', () => {
    const s = 'a'.repeat(100);
    expect(cost('s == t', { s, t: s })).to.equal(2 + 10);
    expect(cost('s.lowerAscii()', { s })).to.equal(1 + 10);
    expect(cost('s + s', { s })).to.equal(2 + 20);
    expect(cost("s.split('a')", { s })).to.equal(1 + 20);
    expect(cost("s.startsWith('a')", { s })).to.equal(1 + 10);
  });

  it('charges regexes by pattern length times input length', () => {
    const s = 'a'.repeat(99);
    // (1 + 99) / 10 = 10 for the input; 8 / 4 = 2 and 11 / 4 rounded up = 3 for the patterns.
    expect(cost("s.matches('^[a-z]+$')", { s })).to.equal(1 + 10 * 2);
    expect(cost("s.find('[a-z]+[0-9]')", { s })).to.equal(1 + 10 * 3);
  });

  it('charges list functions and comprehensions by size', () => {
    const l = Array.from({ length: 10 }, (_, i) => i);
    expect(cost('l.sum()', { l })).to.equal(1 + 10);
    expect(cost('2 in l', { l })).to.equal(1 + 10);
    expect(cost('[1, 2, 3].all(x, x > 0)')).to.equal(40 + 3 * (1 + 1 + 2));
    expect(cost('[1, 2, 3].map(x, x * 2)')).to.equal(40 + 40 + 3 * (1 + 1 + 1 + 1));
    expect(cost('l.filter(x, x < 5).size()', { l })).to.equal(1 + 40 + 10 * 3 + 5 * 2 + 1);
  });

  it('charges the fixed cost of an authorization check', () => {
    const authorizer = { user: { name: 'u' }, authorize: () => ({ decision: 'allow' as const }) };
    expect(cost("authorizer.path('/x').check('get').allowed()", { authorizer })).to.equal(1 + 1 + 350_000 + 1);
  });

  it('is the same on every evaluation', () => {
    const program = compile('l.map(x, x.size()).sum() > 3', { variables: ['l'] });
    const costs = new Set(Array.from({ length: 5 }, () => program.evaluate({ l: ['ab', 'cd', 'e'] }).cost));
    expect(costs.size).to.equal(1);
  });
});

describe('cel runtime budget', () => {
  const program = compile('[1, 2, 3, 4, 5].all(x, x > 0)');

  it('allows an evaluation that costs exactly its budget', () => {
    expect(program.evaluate({}, { budget: 60 }).value).to.equal(true);
  });

  it('stops an evaluation that exceeds its budget with an error naming it', () => {
    expect(() => program.evaluate({}, { budget: 59 })).to.throw(CostLimitError, 'runtime cost budget of 59');
  });

  it('stops early instead of running the whole expression', () => {
    const nested = compile('l.all(x, l.all(y, l.all(z, x + y + z >= 0)))', { variables: ['l'] });
    const l = Array.from({ length: 200 }, (_, i) => i);
    const started = Date.now();
    expect(() => nested.evaluate({ l }, { budget: 10_000 })).to.throw(CostLimitError);
    expect(Date.now() - started).to.be.below(1000);
  });

  it('is not hidden by an operator that absorbs errors', () => {
    expect(() => compile('[1, 2, 3, 4, 5].all(x, x > 0) || true').evaluate({}, { budget: 10 })).to.throw(CostLimitError);
  });

  it('shares an aggregate budget across rules', () => {
    const budget = new CostBudget(100, 'custom resource validation budget', 70);
    expect(budget.evaluate(program, {}).cost).to.equal(60);
    expect(budget.remaining).to.equal(40);
    expect(() => budget.evaluate(program, {})).to.throw(CostLimitError, 'custom resource validation budget of 100');
    expect(() => budget.evaluate(program, {})).to.throw('no further validation rules will be run');
  });

  it('reports the per-call limit when it, not the aggregate, is exceeded', () => {
    const budget = new CostBudget(1000, 'aggregate', 50);
    expect(() => budget.evaluate(program, {})).to.throw(CostLimitError, 'runtime cost budget of 50');
    expect(budget.remaining).to.equal(950);
  });
});

const itemsSchema = (bounds: { maxItems?: number; maxLength?: number }): Schema => ({
  type: 'object',
  properties: {
    items: { type: 'array', maxItems: bounds.maxItems, items: { type: 'string', maxLength: bounds.maxLength } },
  },
});

describe('cel cost estimate', () => {
  it('equals the runtime cost of expressions without variable-size inputs', () => {
    for (const expr of [
      '1 < 2', '[1, 2, 3].map(x, x * 2)', "'abc'.matches('^a')", "quantity('1Gi').isGreaterThan(quantity('1G'))",
      '[?optional.of(1), ?optional.none(), 3]', "{?'a': optional.of(1)}", "optional.of('a').optMap(x, x + 'b').value()",
    ]) {
      const program = compile(expr);
      expect(program.estimateCost().cost, expr).to.equal(program.evaluate({}).cost);
    }
  });

  it('bounds every evaluation from the schema maxItems and maxLength', () => {
    const schema = itemsSchema({ maxItems: 10, maxLength: 20 });
    const program = compile("self.items.all(i, i.matches('^[a-z]+$'))", { schema });
    const self = { items: Array.from({ length: 10 }, () => 'a'.repeat(20)) };
    const { cost: actual } = program.evaluate({ self });
    const { cost: estimate, missingBounds } = program.estimateCost();
    expect(estimate).to.be.at.least(actual);
    // self 1 + items 1 + 10 iterations of (i 1 + regex (21 / 10 up) * (8 / 4) + 2).
    expect(estimate).to.equal(2 + 10 * (1 + 3 * 2 + 2));
    expect(missingBounds).to.deep.equal([]);
  });

  it('assumes the largest request when a bound is missing', () => {
    const { cost, missingBounds } = compile("self.items.all(i, i.matches('^[a-z]+$'))", { schema: itemsSchema({}) }).estimateCost();
    expect(cost).to.be.above(STATIC_ESTIMATED_COST_LIMIT);
    expect(missingBounds).to.deep.include({ path: 'self.items', keyword: 'maxItems' });
    expect(missingBounds).to.deep.include({ path: 'self.items[*]', keyword: 'maxLength' });
  });

  it('rejects a too expensive rule when it is written, naming the bounds to add', () => {
    const write = (schema: Schema) => compile("self.items.all(i, i.matches('^[a-z]+$'))", { schema, costLimit: 1_000_000 });
    expect(() => write(itemsSchema({}))).to.throw(CompileError, /exceeds budget by factor of .*add maxItems to self\.items, maxLength to self\.items\[\*\]/);
    expect(() => write(itemsSchema({ maxLength: 10 }))).to.throw(CompileError, /add maxItems to self\.items$/);
    expect(() => write(itemsSchema({ maxItems: 100, maxLength: 64 }))).not.to.throw();
  });

  it('never falls below the runtime cost', () => {
    const schema: Schema = {
      type: 'object',
      properties: {
        l: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 10 } },
        m: { type: 'object', maxProperties: 3, additionalProperties: { type: 'integer' } },
        s: { type: 'string', maxLength: 12 },
      },
    };
    const self = { l: ['aaaaaaaaaa', 'bbbbbbbbbb', 'c', 'd', 'e'], m: { a: 1, b: 2, c: 3 }, s: 'hello-world!' };
    for (const expr of [
      "self.l.map(x, x.upperAscii()).join(',').size() > 0", "self.l.filter(x, x.size() > 1).all(y, y.matches('^[a-z]+$'))",
      'self.m.all(k, self.m[k] > 0)', "self.s.split('-').map(p, p.size()).sum() > 0", "self.l.exists_one(x, x == 'c')",
      "self.s.replace('l', 'LL').size() < 100", "self.l.indexOf('c') == 2", 'self.l.max().size() > 0',
      "self.s.findAll('[a-z]').size() > 0", "'c' in self.l", 'self.l.map(a, self.l.map(b, a + b)).size() > 0',
      "has(self.s) && self.s.lowerAscii().startsWith('h')", 'cel.bind(x, self.s, x + x).size() > 0',
      '[?self.l[?0], ?self.l[?9]].size() > 0', "{?'k': self.m[?'a']}.size() > 0",
      'self.l[?0].optMap(x, x.upperAscii()).orValue(\'\').size() > 0', 'self.m[?\'a\'].optFlatMap(v, optional.ofNonZeroValue(v)).hasValue()',
    ]) {
      const program = compile(expr, { schema });
      expect(program.estimateCost().cost, expr).to.be.at.least(program.evaluate({ self }).cost);
    }
  });

  it('multiplies nested comprehensions', () => {
    const schema: Schema = { type: 'object', properties: { l: { type: 'array', maxItems: 10, items: { type: 'integer' } } } };
    const { cost } = compile('self.l.all(x, self.l.all(y, x != y))', { schema }).estimateCost();
    // outer: self.l 2 + 10 * (2 + inner), inner: self.l 2 + 10 * (x 1 + y 1 + != 1 + 2).
    expect(cost).to.equal(2 + 10 * (2 + 2 + 10 * 5));
  });
});
