// Deterministic cost units. The figures follow the platform's published model:
// reading a variable or a field costs 1, a comparison 1, a list literal 40, and
// natively implemented functions cost by their time complexity in the size of
// their inputs (strings by length, lists by size, regexes by pattern x input).
import { ObjectValue } from './object.js';
import { stringSize } from './values.js';

export const SELECT_AND_IDENT_COST = 1;
export const LIST_CREATE_COST = 40;
export const MAP_CREATE_COST = 30;
/** Reading and folding the accumulator once per element a comprehension visits. */
export const ITERATION_COST = 1;
/** Testing whether a quantifier (all, exists) may stop early, once per element. */
export const QUANTIFIER_TEST_COST = 1;
export const AUTHZ_CHECK_COST = 350_000;
export const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;

/** Runtime budget of one expression evaluation. */
export const PER_CALL_LIMIT = 1_000_000;
/** Runtime budget shared by all the rules of one custom-resource validation. */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/** Largest estimated cost a rule may have when it is written. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Largest estimated cost of all the rules of one custom resource definition. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

/** The size of a value as cost functions see it: length, element or entry count, else 1. */
function sizeOf(v: unknown): number {
  if (typeof v === 'string') return stringSize(v);
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof Map && !(v instanceof ObjectValue)) return v.size;
  if (v !== null && typeof v === 'object' && v.constructor === Object) return Object.keys(v).length;
  return 1;
}

const traverse = (n: number): number => Math.ceil(n * STRING_TRAVERSAL_FACTOR);

/** Cost of walking a value as a tree: 1 per scalar, a tenth of the length per string. */
function traversalCost(v: unknown): number {
  if (typeof v === 'string') return Math.floor(stringSize(v) * STRING_TRAVERSAL_FACTOR);
  if (v instanceof Uint8Array) return Math.floor(v.length * STRING_TRAVERSAL_FACTOR);
  if (Array.isArray(v)) return v.reduce((sum: number, x) => sum + traversalCost(x), 0);
  if (v instanceof Map && !(v instanceof ObjectValue)) {
    let sum = 0;
    for (const [k, x] of v) sum += traversalCost(k) + traversalCost(x);
    return sum;
  }
  return 1;
}

/** Regex work: (1 + input length) / 10 times pattern length / 4, each rounded up. */
export function regexCost(inputSize: number, patternSize: number): number {
  return traverse(1 + inputSize) * Math.ceil(patternSize * REGEX_LENGTH_FACTOR);
}

/** Runtime cost of one call of a function; args start with the receiver of a method. */
export function callCost(name: string, args: readonly unknown[], result: unknown): number {
  switch (name) {
    case 'check': return AUTHZ_CHECK_COST;
    case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
      return traversalCost(args[0]);
    case 'url': case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
    case 'quantity': case 'isQuantity': case 'startsWith': case 'endsWith': case 'bytes': case 'isURL':
      return traverse(sizeOf(args[0]));
    case 'string':
      return args[0] instanceof Uint8Array ? traverse(sizeOf(args[0])) : 1;
    case 'replace': case 'split':
      return traverse(2 * sizeOf(args[0]));
    case 'join':
      return traverse(2 * sizeOf(result));
    case 'matches': case 'find': case 'findAll':
      return regexCost(sizeOf(args[0]), sizeOf(args[1]));
    case 'contains':
      return traverse(sizeOf(args[0])) * traverse(sizeOf(args[1]));
    default:
      return 1;
  }
}

/** Runtime cost of an operator: 1, or by size for strings, bytes, lists and maps. */
export function operatorCost(op: string, left: unknown, right: unknown): number {
  switch (op) {
    case '==': case '!=':
      return traverse(Math.min(sizeOf(left), sizeOf(right)));
    case '<': case '<=': case '>': case '>=':
      return typeof left === 'string' || left instanceof Uint8Array ? traverse(Math.min(sizeOf(left), sizeOf(right))) : 1;
    case '+':
      return typeof left === 'string' || left instanceof Uint8Array ? traverse(sizeOf(left) + sizeOf(right)) : 1;
    case 'in':
      return Array.isArray(right) ? right.length : 1;
    default:
      return 1;
  }
}
