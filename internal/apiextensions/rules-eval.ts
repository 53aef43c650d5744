// The validation rules of a custom object evaluated on a write: each schema
// node's rules with self (and oldSelf on updates, found by key in list-type map
// lists), under the per-call limit and the object's runtime budget.
import { Optional } from '@marcbachmann/cel-js';
import type { StatusCause } from '../apimachinery/status.js';
import { CostLimitError, EvalError, PER_CALL_LIMIT, type Program, RUNTIME_CEL_COST_BUDGET } from '../cel/index.js';
import { duplicate, forbidden, invalid, required } from '../registry/causes.js';
import { deepEqual, isObject } from '../registry/values.js';
import { NEWLINE, type Rule, type RuleNode } from './rules.js';
import { keyedItems } from './structural.js';

/** The largest message a messageExpression may produce. */
const MAX_MESSAGE_BYTES = 5000;

interface Budget { remaining: number }

const RUNNING_OUT = 'validation failed due to running out of cost budget, no further validation rules will be run';
const ruleText = (r: Rule): string => (r.message?.trim() || (r.rule ?? '').trim());
const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Evaluates every rule below `root` on a write; `old` is the stored object on an update. */
export function evaluateRules(root: RuleNode, value: unknown, old: unknown, path = ''): StatusCause[] {
  const out: StatusCause[] = [];
  walk(root, value, old, path, { remaining: RUNTIME_CEL_COST_BUDGET }, out);
  return out;
}

/** Answers false once the budget is spent: no further rule runs. */
function walk(n: RuleNode, value: unknown, old: unknown, path: string, budget: Budget, out: StatusCause[]): boolean {
  if (value === undefined || value === null) return true;
  if (!runRules(n, value, old ?? undefined, path, budget, out)) return false;
  for (const sub of n.allOf ?? []) if (!walk(sub, value, old, path, budget, out)) return false;
  if (Array.isArray(value)) {
    if (!n.items) return true;
    const olds = n.mapKeys && Array.isArray(old) ? keyedItems(n.mapKeys, old) : undefined;
    for (let i = 0; i < value.length; i++) {
      if (!walk(n.items, value[i], olds?.(value[i]), `${path}[${i}]`, budget, out)) return false;
    }
  } else if (isObject(value)) {
    const oldObj = isObject(old) ? old : undefined;
    for (const [key, member] of Object.entries(value)) {
      const child = n.properties?.get(key) ?? n.additional;
      if (child && !walk(child, member, oldObj?.[key], join(path, key), budget, out)) return false;
    }
  }
  return true;
}

function runRules(n: RuleNode, self: unknown, old: unknown, path: string, budget: Budget, out: StatusCause[]): boolean {
  // A stored rule that no longer compiles refuses the value rather than let it in unchecked.
  for (const error of n.compileErrors ?? []) out.push(invalid(path, n.type, `rule compile error: ${error}`));
  let unchanged: boolean | undefined;
  for (const c of n.rules) {
    const optional = c.source.optionalOldSelf === true;
    if (c.usesOldSelf && old === undefined && !optional) continue;
    // Ratcheting: a rule that does not compare with oldSelf does not refuse a value the update leaves as it was.
    if (!c.usesOldSelf && old !== undefined && (unchanged ??= deepEqual(self, old))) continue;
    const activation = { self, oldSelf: optional ? (old === undefined ? Optional.none() : Optional.of(old)) : old };
    if (budget.remaining <= 0) {
      out.push(invalid(path, n.type, RUNNING_OUT));
      return false;
    }
    const limit = Math.min(PER_CALL_LIMIT, budget.remaining);
    let passed: unknown;
    try {
      const result = c.program.evaluate(activation, { budget: limit });
      budget.remaining -= result.cost;
      passed = result.value;
    } catch (err) {
      if (err instanceof CostLimitError) {
        budget.remaining = 0;
        out.push(invalid(path, n.type, limit < PER_CALL_LIMIT ? RUNNING_OUT
          : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(c.source)}`));
        return false;
      }
      out.push(invalid(path, n.type, errorMessage(err, c.source)));
      continue;
    }
    if (passed === true) continue;
    // A fieldPath starting at a map key (`[key]`) follows the node's path without a dot.
    const field = !c.fieldPath ? path : c.fieldPath.startsWith('[') ? `${path}${c.fieldPath}` : join(path, c.fieldPath);
    const message = c.message ? evaluateMessage(c.message, activation, budget) : undefined;
    if (message === null) {
      out.push(invalid(field, n.type, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'));
      return false;
    }
    out.push(failure(field, n.type, message ?? defaultMessage(c.source), c.source.reason));
  }
  return true;
}

/** A rule that failed to run is the object's problem (a 422 cause), whatever the error, never the server's. */
function errorMessage(err: unknown, source: Rule): string {
  if (!(err instanceof EvalError)) return `${String(err)} evaluating rule: ${ruleText(source)}`;
  if (err.message.startsWith('found no matching overload') || err.message.startsWith('no such overload')) {
    return `'${err.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(source)}`;
  }
  return `${err.message} evaluating rule: ${ruleText(source)}`;
}

function defaultMessage(r: Rule): string {
  return r.message?.trim() || `failed rule: ${ruleText(r)}`;
}

/** The message a messageExpression gives; undefined to fall back to the rule's message, null when the budget ran out. */
function evaluateMessage(p: Program, activation: Record<string, unknown>, budget: Budget): string | undefined | null {
  try {
    const result = p.evaluate(activation, { budget: Math.min(PER_CALL_LIMIT, budget.remaining) });
    budget.remaining -= result.cost;
    const text = typeof result.value === 'string' ? result.value.trim() : '';
    if (!text || NEWLINE.test(text) || Buffer.byteLength(text) > MAX_MESSAGE_BYTES) return undefined;
    return text;
  } catch (err) {
    if (err instanceof CostLimitError) {
      budget.remaining = 0;
      return null;
    }
    return undefined;
  }
}

function failure(field: string, type: string, detail: string, reason: string | undefined): StatusCause {
  switch (reason) {
    case 'FieldValueForbidden': return forbidden(field, detail);
    case 'FieldValueRequired': return required(field, detail);
    case 'FieldValueDuplicate': return duplicate(field, type);
    default: return invalid(field, type, detail);
  }
}
