// svc-cel: evaluates an expression the way the server does, so users can check
// their rules before they write them into a resource definition.
//
//   svc-cel --expr EXPR [--vars FILE] [--schema FILE] [--estimate] [--budget N]
//
// Prints {"result": <value>, "cost": <n>} (or {"estimatedCost": <n>}) and exits 0;
// on a compile or runtime error prints {"error": "<message>"} and exits 1.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { type FlagSet, parseFlags } from '../../internal/config/flags.js';
import { compile, PER_CALL_LIMIT, type Schema, stringifyValue } from '../../internal/cel/index.js';

const FLAGS: FlagSet = {
  expr: { type: 'string', help: 'the expression to evaluate' },
  vars: { type: 'string', help: 'JSON or YAML file whose top-level keys are the variables' },
  schema: { type: 'string', help: 'OpenAPI schema (JSON or YAML) typing self and oldSelf' },
  estimate: { type: 'bool', help: 'print the worst-case cost instead of evaluating' },
  budget: { type: 'int', default: String(PER_CALL_LIMIT), help: 'runtime cost budget' },
};

function readDocument(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${what} file ${path}: ${(err as Error).message}`);
  }
  // Whole numbers stay integers of any size; numbers with a fraction are doubles.
  return YAML.parse(text, { intAsBigInt: true });
}

function asObject(doc: unknown, what: string): Record<string, unknown> {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`the ${what} file must hold a mapping`);
  return doc as Record<string, unknown>;
}

/** Schema bounds are plain numbers; a schema document may also wrap it as openAPIV3Schema. */
function toSchema(doc: unknown): Schema {
  const plain = JSON.parse(JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
  const schema = asObject(plain, 'schema');
  return (schema.openAPIV3Schema as Schema | undefined) ?? (schema as Schema);
}

function run(argv: string[]): string {
  const flags = parseFlags(argv, FLAGS);
  if (!flags.given.has('expr')) throw new Error('--expr is required');
  const vars = flags.string('vars') ? asObject(readDocument(flags.string('vars'), 'vars'), 'vars') : {};
  const schema = flags.string('schema') ? toSchema(readDocument(flags.string('schema'), 'schema')) : undefined;
  const program = compile(flags.string('expr'), { schema, variables: Object.keys(vars) });
  if (flags.bool('estimate')) return `{"estimatedCost": ${program.estimateCost().cost}}`;
  const { value, cost } = program.evaluate(vars, { budget: flags.int('budget') });
  return `{"result": ${stringifyValue(value)}, "cost": ${cost}}`;
}

try {
  process.stdout.write(`${run(process.argv.slice(2))}\n`);
} catch (err) {
  process.stdout.write(`{"error": ${JSON.stringify((err as Error).message)}}\n`);
  process.exitCode = 1;
}
