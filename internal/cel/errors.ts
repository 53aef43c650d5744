// Errors the expression environment reports.
import { EvaluationError } from '@marcbachmann/cel-js';

/** An error raised by a library function while an expression runs. */
export function runtimeError(message: string): EvaluationError {
  return new EvaluationError(message);
}

/** Line and column (1-based) of an offset in an expression. */
export function position(expression: string, offset: number): { line: number; column: number } {
  const before = expression.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** The expression could not be compiled: a syntax, declaration or type error, or a rejected rule. */
export class CompileError extends Error {
  override readonly name = 'CompileError';
  constructor(message: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

/** The expression failed while it was evaluated. */
export class EvalError extends Error {
  override readonly name = 'EvalError';
}

/** Evaluation stopped because a cost budget ran out. */
export class CostLimitError extends EvalError {
  constructor(message: string, readonly budget: number, readonly budgetName: string) {
    super(message);
  }
}
