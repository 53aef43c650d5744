// Evaluations per second of typical rules, and compile time, for the expression
// language. Each measurement runs for a bounded time and a bounded count.
import { compile, type Schema } from '../../internal/cel/index.js';

/** Time spent measuring each operation. */
const BUDGET_MS = 300;
const MAX_RUNS = 2_000_000;

const str: Schema = { type: 'string', maxLength: 63 };
const int: Schema = { type: 'integer' };
const schema: Schema = {
  type: 'object',
  properties: {
    replicas: int,
    maxReplicas: int,
    name: str,
    metadata: { type: 'object', properties: { name: str } },
    items: { type: 'array', maxItems: 100, items: { type: 'object', properties: { name: str, value: int } } },
  },
};

const self = {
  replicas: 3,
  maxReplicas: 5,
  name: 'frontend-web-7',
  metadata: { name: 'xfrontend' },
  items: Array.from({ length: 100 }, (_, i) => ({ name: `item-${i}`, value: i })),
};

const RULES: Array<[name: string, expression: string]> = [
  ['eval self.replicas <= self.maxReplicas', 'self.replicas <= self.maxReplicas'],
  ["eval self.metadata.name.startsWith('x')", "self.metadata.name.startsWith('x')"],
  ['eval filter+map over 100 items', 'self.items.filter(i, i.value % 2 == 0).map(i, i.name).size() == 50'],
  ['eval regex match', "self.name.matches('^[a-z]+(-[a-z0-9]+)*$')"],
];

/** Runs op after a short warm-up until the budget or the count runs out; its operations per second. */
function measure(op: (i: number) => unknown): number {
  for (let i = 0; i < 100; i++) op(-i - 1);
  let runs = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < BUDGET_MS && runs < MAX_RUNS) {
    op(runs++);
    if ((runs & 63) === 0) elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  return Math.round((runs * 1000) / elapsed);
}

export async function benchCel(): Promise<Array<{ name: string; opsPerSec: number; cost?: number }>> {
  const results: Array<{ name: string; opsPerSec: number; cost?: number }> = [];
  for (const [name, expression] of RULES) {
    const program = compile(expression, { schema });
    const { value, cost } = program.evaluate({ self });
    if (value !== true) throw new Error(`${expression} evaluated to ${String(value)}`);
    results.push({ name, opsPerSec: measure(() => program.evaluate({ self })), cost });
  }
  // Every compile below is of a new expression, so none is answered from the cache.
  const stamp = Date.now();
  results.push({
    name: 'compile a rule (type check, instrument)',
    opsPerSec: measure((i) => compile(`self.replicas <= self.maxReplicas + ${stamp}${i < 0 ? `0${-i}` : i}`, { schema })),
  });
  results.push({
    name: 'compile + estimate a comprehension rule',
    opsPerSec: measure((i) => compile(`self.items.all(x, x.value < ${stamp}${i < 0 ? `0${-i}` : i})`, { schema }).estimateCost()),
  });
  return results;
}
