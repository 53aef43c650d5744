// A cost budget shared by several evaluations, e.g. all the validation rules of
// one custom resource: each rule may use up to the per-call limit, and together
// no more than the aggregate.
import { PER_CALL_LIMIT } from './cost.js';
import type { EvalResult, Program } from './compile.js';
import { CostLimitError } from './errors.js';

export class CostBudget {
  private spent = 0;

  constructor(
    readonly total: number,
    /** Names the budget in the error raised when it runs out. */
    readonly name = 'aggregate cost budget',
    readonly perCallLimit = PER_CALL_LIMIT,
  ) {}

  get remaining(): number {
    return Math.max(0, this.total - this.spent);
  }

  /** Evaluates within what is left; the cost is deducted whether or not the rule passes. */
  evaluate(program: Program, activation: Readonly<Record<string, unknown>>): EvalResult {
    if (this.remaining === 0) throw this.exhausted();
    const limitedByAggregate = this.remaining < this.perCallLimit;
    const budget = Math.min(this.perCallLimit, this.remaining);
    try {
      const result = program.evaluate(activation, { budget });
      this.spent += result.cost;
      return result;
    } catch (err) {
      if (!(err instanceof CostLimitError)) throw err;
      this.spent += budget;
      throw limitedByAggregate ? this.exhausted() : err;
    }
  }

  private exhausted(): CostLimitError {
    return new CostLimitError(
      `validation failed due to running out of cost budget, no further validation rules will be run: ` +
      `the ${this.name} of ${this.total} is spent`, this.total, this.name);
  }
}
