// Expressions of admission policies: compiled once per policy generation
// against the variables policies see, evaluated per request under the
// platform's cost limits. A compile error is kept with the expression and
// surfaces as an evaluation error, which the failure policy then decides.
import {
  compile, CompileError, CostBudget, CostLimitError, EvalError, RUNTIME_CEL_COST_BUDGET, type Program, type Schema,
} from '../../cel/index.js';
import { ADMISSION_REQUEST_SCHEMA } from './schemas.js';

/** Variables every admission policy expression may use besides `request`. */
export const POLICY_VARIABLES = ['object', 'oldObject', 'params', 'namespaceObject', 'variables', 'authorizer'] as const;

export interface Compiled {
  readonly expression: string;
  readonly program?: Program;
  /** Why the expression did not compile. */
  readonly error?: string;
}

/** Compiles an expression of a stored policy (every feature of the release is allowed). */
export function compileExpression(expression: string, typed: Readonly<Record<string, Schema>> = {}): Compiled {
  try {
    const program = compile(expression, {
      stored: true, variables: [...POLICY_VARIABLES], typed: { request: ADMISSION_REQUEST_SCHEMA, ...typed },
    });
    return { expression, program };
  } catch (err) {
    if (err instanceof CompileError) return { expression, error: `compilation failed: ${err.message}` };
    throw err;
  }
}

/** Why an expression failed, as the policy metrics label it. */
export type ExpressionErrorType = 'compile_error' | 'invalid_error' | 'out_of_budget';

/** An expression's failure at run time, in the platform's words. */
export class ExpressionError extends Error {
  constructor(message: string, readonly errorType: ExpressionErrorType = 'invalid_error') {
    super(message);
  }
}

/** The cost budget of one policy's evaluation for one request: every expression draws on it. */
export const policyBudget = (): CostBudget => new CostBudget(RUNTIME_CEL_COST_BUDGET, 'runtime cost budget');

/** Evaluates one compiled expression; throws ExpressionError (naming the expression) on any failure. */
export function run(c: Compiled, activation: Readonly<Record<string, unknown>>, budget: CostBudget): unknown {
  if (!c.program) throw new ExpressionError(`expression '${c.expression}' resulted in error: ${c.error}`, 'compile_error');
  try {
    return budget.evaluate(c.program, activation).value;
  } catch (err) {
    if (err instanceof EvalError || err instanceof CostLimitError) {
      const type = err instanceof CostLimitError ? 'out_of_budget' : 'invalid_error';
      throw new ExpressionError(`expression '${c.expression}' resulted in error: ${err.message}`, type);
    }
    throw err;
  }
}

/** Evaluates an expression that must answer a bool. */
export function runBool(c: Compiled, activation: Readonly<Record<string, unknown>>, budget: CostBudget): boolean {
  const value = run(c, activation, budget);
  if (typeof value !== 'boolean') throw new ExpressionError(`expression '${c.expression}' resulted in error: expression must evaluate to bool`);
  return value;
}
