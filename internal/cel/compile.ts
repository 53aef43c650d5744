// Compiling and running expressions: parse, type check against the declared
// variables, instrument for cost, gate by release, cache by expression and
// declarations; evaluate under a cost budget.
import { CostLimitError, CompileError, EvalError, position } from './errors.js';
import { PER_CALL_LIMIT } from './cost.js';
import { declare, type DeclarationOptions, type Declarations } from './declarations.js';
import { type CostEstimate, estimateMessage, estimateTree } from './estimate.js';
import { BudgetExhausted, CostMeter, type FeatureUse, instrument, LiteralError, metered, type Node, prepare } from './instrument.js';
import { compareReleases, checkRelease, SERVING_RELEASE } from './release.js';
import { referencesVariable, selectsField } from './references.js';

export interface CompileOptions extends DeclarationOptions {
  /** Release of the server the rule is written to; newer features are rejected. */
  readonly release?: string;
  /** The rule is already stored: it compiles with everything, whatever the release. */
  readonly stored?: boolean;
  /** Reject the rule when its estimated worst-case cost exceeds this. */
  readonly costLimit?: number;
}

export interface EvalOptions {
  /** Cost units the evaluation may use; PER_CALL_LIMIT when absent. */
  readonly budget?: number;
}

export interface EvalResult {
  readonly value: unknown;
  readonly cost: number;
}

interface Parsed {
  (context?: Record<string, unknown>): unknown;
  readonly ast: Node;
  check(): { valid: boolean; type?: string; error?: CelFault };
}

interface CelFault extends Error {
  readonly code?: string;
  readonly summary?: string;
  readonly range?: { start: number; end: number };
}

/** A compiled expression; safe to evaluate many times. */
export class Program {
  private estimate?: CostEstimate;

  constructor(
    readonly expression: string,
    /** Type of the result, e.g. bool. */
    readonly outputType: string,
    /** Versioned features the expression uses. */
    readonly features: readonly FeatureUse[],
    private readonly parsed: Parsed,
    private readonly declarations: Declarations,
  ) {}

  /** Worst-case cost over every input the declarations admit. */
  estimateCost(): CostEstimate {
    return (this.estimate ??= estimateTree(this.parsed.ast, this.declarations.variables));
  }

  /** True when the expression reads `variable.field` (e.g. claims.email). */
  selects(variable: string, field: string): boolean {
    return selectsField(this.parsed.ast, variable, field);
  }

  /** True when the expression reads the variable (e.g. oldSelf, which makes a rule a transition rule). */
  references(variable: string): boolean {
    return referencesVariable(this.parsed.ast, variable);
  }

  /** Evaluates with the variables of activation (JSON data or expression values). */
  evaluate(activation: Readonly<Record<string, unknown>>, options: EvalOptions = {}): EvalResult {
    const context: Record<string, unknown> = {};
    for (const [name, decl] of this.declarations.variables) {
      const value = activation[name];
      if (value !== undefined) context[name] = decl.convert(value);
    }
    const budget = options.budget ?? PER_CALL_LIMIT;
    const meter = new CostMeter(budget);
    let value: unknown;
    try {
      value = metered(meter, () => this.parsed(context));
    } catch (err) {
      if (meter.exceeded || err instanceof BudgetExhausted) throw budgetExceeded(budget);
      throw new EvalError(runtimeSummary(err as CelFault));
    }
    // Short-circuiting operators swallow errors, so the budget is checked once more.
    if (meter.exceeded) throw budgetExceeded(budget);
    return { value, cost: meter.cost };
  }
}

function budgetExceeded(budget: number): CostLimitError {
  return new CostLimitError(
    `operation cancelled: actual cost limit exceeded: the evaluation needs more than its runtime cost budget of ${budget}`,
    budget, 'runtime cost budget');
}

function summaryOf(err: CelFault): string {
  return err.summary ?? err.message;
}

/** Runtime errors in the platform's words. */
function runtimeSummary(err: CelFault): string {
  const summary = summaryOf(err);
  return err.code === 'no_such_key' ? summary.replace(/^No such key/, 'no such key') : summary;
}

/** Declaration errors in the platform's words, which rule authors know from other tools. */
function compileSummary(err: CelFault): string {
  const summary = summaryOf(err);
  const name = summary.slice(summary.indexOf(': ') + 2);
  if (err.code === 'unknown_variable') return `undeclared reference to '${name}'`;
  if (err.code === 'no_such_key') return `undefined field '${name}'`;
  return summary;
}

function compileError(expression: string, message: string, offset: number | undefined): CompileError {
  if (offset === undefined) return new CompileError(message);
  const { line, column } = position(expression, offset);
  return new CompileError(`ERROR: <input>:${line}:${column}: ${message}`, line, column);
}

function gate(expression: string, features: readonly FeatureUse[], release: string): void {
  const newer = features.find((f) => compareReleases(f.since, release) > 0);
  if (newer) {
    throw compileError(expression,
      `${newer.feature} was introduced in release ${newer.since} and is not available in release ${release}`, newer.offset);
  }
}

function uniqueFeatures(features: readonly FeatureUse[]): FeatureUse[] {
  const seen = new Map<string, FeatureUse>();
  for (const f of features) if (!seen.has(f.feature)) seen.set(f.feature, f);
  return [...seen.values()];
}

function build(expression: string, declarations: Declarations): Program {
  let parsed: Parsed;
  try {
    parsed = declarations.env.parse(expression) as unknown as Parsed;
  } catch (err) {
    const fault = err as CelFault;
    throw compileError(expression, compileSummary(fault), fault.range?.start);
  }
  prepare(parsed.ast);
  const checked = parsed.check();
  if (!checked.valid) throw compileError(expression, compileSummary(checked.error!), checked.error!.range?.start);
  let features: FeatureUse[];
  try {
    features = uniqueFeatures(instrument(parsed.ast));
  } catch (err) {
    if (err instanceof LiteralError) throw compileError(expression, err.message, err.offset);
    throw err;
  }
  return new Program(expression, checked.type!, features, parsed, declarations);
}

const CACHE_LIMIT = 4096;
const programs = new Map<string, Program>();

/**
 * Compiles an expression against declared variables. Throws CompileError for
 * syntax and type errors, for features newer than the release (unless the rule
 * is stored) and for a worst-case cost above costLimit.
 */
export function compile(expression: string, options: CompileOptions = {}): Program {
  const declarations = declare(options);
  const key = `${declarations.key}\u0000${expression}`;
  let program = programs.get(key);
  if (!program) {
    program = build(expression, declarations);
    if (programs.size >= CACHE_LIMIT) programs.delete(programs.keys().next().value!);
    programs.set(key, program);
  }
  if (!options.stored) gate(expression, program.features, checkRelease(options.release ?? SERVING_RELEASE));
  if (options.costLimit !== undefined) {
    const estimate = program.estimateCost();
    if (estimate.cost > options.costLimit) throw compileError(expression, estimateMessage(estimate, options.costLimit), undefined);
  }
  return program;
}
