// Runtime hooks on a checked expression tree. The underlying interpreter has no
// cost tracking, so every node that costs something gets an evaluate wrapper
// that charges the meter of the running evaluation, and every function and
// operator call gets a wrapper that charges by the size of its arguments. The
// same walk swaps in the platform's semantics for some built-in methods and
// records which versioned features the expression uses.
import { Optional } from '@marcbachmann/cel-js';
import { callCost, ITERATION_COST, LIST_CREATE_COST, MAP_CREATE_COST, operatorCost, QUANTIFIER_TEST_COST, SELECT_AND_IDENT_COST } from './cost.js';
import { parseDuration } from './duration.js';
import { FUNCTION_RELEASES, REPLACEMENTS } from './library.js';
import { compileRegex } from './regex.js';
import { RELEASE_1_29 } from './release.js';

type EvalFn = (ev: unknown, ast: Node, ctx: unknown) => unknown;
/** An interpreter call handler; its arguments depend on the node kind. */
type Handle = (...args: any[]) => unknown;

interface TypeDecl {
  readonly kind: string;
  readonly name: string;
  readonly valueType?: TypeDecl;
  matches(other: TypeDecl): boolean;
}

interface Meta {
  /** Entries of a list or map literal written with '?': optional values, left out when empty. */
  readonly optionalIndices?: readonly number[];
  readonly alternate?: Node;
  readonly macro?: Record<string, unknown> & { macroHasProps?: Node[]; evaluate: (ev: unknown, m: unknown, ctx: unknown) => unknown };
  readonly evaluate: EvalFn;
}

/** The interpreter's node, with the fields its type checker fills in. */
export interface Node {
  readonly op: string;
  /** Operands, shaped by op: a literal, a name, nodes, or [name, receiver, nodes] for calls. */
  readonly args: any;
  readonly meta: Meta;
  readonly start: number;
  readonly checkedType?: TypeDecl;
  handle?: Handle;
  evaluate: EvalFn;
}

/** Cost accumulated by one evaluation, and the budget it may not pass. */
export class CostMeter {
  cost = 0;
  exceeded = false;
  constructor(readonly limit: number) {}
}

/** Thrown inside the interpreter when the budget runs out; reported by the caller. */
export class BudgetExhausted extends Error {}

let active: CostMeter | undefined;

/** Runs fn with meter collecting the cost of the evaluation it performs. */
export function metered<T>(meter: CostMeter, fn: () => T): T {
  const previous = active;
  active = meter;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

function charge(units: number): void {
  const meter = active;
  if (!meter) return;
  meter.cost += units;
  if (meter.cost > meter.limit) {
    meter.exceeded = true;
    throw new BudgetExhausted();
  }
}

export interface FeatureUse {
  readonly feature: string;
  readonly since: string;
  readonly offset: number;
}

/** A constant argument that is invalid, found when the expression is compiled. */
export class LiteralError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

const NUMERIC = new Set(['int', 'uint', 'double']);
const ORDERING = new Set(['<', '<=', '>', '>=']);
const BINARY = new Set(['==', '!=', 'in', '+', '-', '*', '/', '%', '<', '<=', '>', '>=']);
const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

function baseEvaluate(node: Node): EvalFn {
  const { alternate, macro, evaluate } = node.meta;
  if (alternate) return (ev, _ast, ctx) => alternate.evaluate(ev, alternate, ctx);
  if (macro) return (ev, _ast, ctx) => macro.evaluate(ev, macro, ctx);
  return evaluate;
}

function chargeOnEvaluate(node: Node, units: number): void {
  if (units === 0) return;
  const base = baseEvaluate(node);
  node.evaluate = (ev, ast, ctx) => {
    charge(units);
    return base(ev, ast, ctx);
  };
}

function withPosition(err: unknown, node: Node): unknown {
  const located = err as { withAst?: (n: Node) => unknown };
  return typeof located.withAst === 'function' ? located.withAst(node) : err;
}

function firstMatches(kind: 'string' | 'list' | 'double', value: unknown): boolean {
  if (kind === 'list') return Array.isArray(value);
  return typeof value === (kind === 'double' ? 'number' : 'string');
}

/** Wraps a function call: the platform's replacement when there is one, then its cost. */
function hookCall(node: Node): void {
  const method = node.op === 'rcall';
  const name: string = node.args[0];
  const arity = (method ? node.args[2] : node.args[1]).length;
  const replacement = REPLACEMENTS.get(`${method ? '.' : ''}${name}/${arity}`);
  const original = node.handle!;
  const call = (args: unknown[], run: () => unknown): unknown => {
    let result: unknown;
    if (replacement && firstMatches(replacement.first, args[0])) {
      try {
        result = replacement.impl(...args);
      } catch (err) {
        throw withPosition(err, node);
      }
    } else {
      result = run();
    }
    charge(callCost(name, args, result));
    return result;
  };
  node.handle = method
    ? (args: unknown[], ev: unknown, ast: unknown) => call(args, () => original(args, ev, ast))
    : (args: unknown[], ast: unknown, ev: unknown) => call(args, () => original(args, ast, ev));
}

function hookOperator(node: Node): void {
  const original = node.handle!;
  const op = node.op;
  node.handle = (left: unknown, right: unknown, ast: unknown, ev: unknown) => {
    charge(operatorCost(op, left, right));
    return original(left, right, ast, ev);
  };
}

function macroCharge(node: Node): number {
  const macro = node.meta.macro!;
  if (node.op === 'call' && node.args[0] === 'has') {
    // has(a.b.c) reads a, then selects every field but the last, which it only tests.
    return Math.max(0, (macro.macroHasProps?.length ?? 2) - 2);
  }
  return node.args[0] === 'bind' ? 0 : 1;
}

/** The nodes an evaluation of node may run, including macro expansions. */
function children(node: Node): Node[] {
  const out: Node[] = [];
  const { alternate, macro } = node.meta;
  if (alternate) out.push(alternate);
  if (macro) {
    for (const [key, value] of Object.entries(macro)) {
      if (key === 'ast') continue;
      if (Array.isArray(value)) out.push(...value.filter(isNode));
      else if (isNode(value)) out.push(value);
    }
  }
  const a = node.args;
  switch (node.op) {
    case 'value': case 'id': case 'accuValue': case 'accuInc': break;
    case 'call': out.push(...a[1]); break;
    case 'rcall': out.push(a[1], ...a[2]); break;
    case '.': case '.?': out.push(a[0]); break;
    case 'map': for (const [k, v] of a) out.push(k, v); break;
    case 'comprehension': out.push(a.iterable, a.init, a.step); break;
    case '!_': case '-_': case 'accuPush': out.push(a); break;
    default: out.push(...a);
  }
  return out;
}

let nodeClass: Function | undefined;

function isNode(v: unknown): v is Node {
  return nodeClass !== undefined && v instanceof nodeClass;
}

function constantString(node: Node | undefined): string | undefined {
  return node?.op === 'value' && typeof node.args === 'string' ? node.args : undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** The type an entry contributes to its literal: T for an optional entry of optional(T); none when unknown. */
function entryType(node: Node, optional: boolean): TypeDecl | undefined {
  const type = optional ? node.checkedType?.valueType : node.checkedType;
  return type && type.kind !== 'dyn' && type.kind !== 'param' ? type : undefined;
}

/**
 * Aggregate literals hold one type; an element typed dyn fits any. (The
 * interpreter's own check would also reject dyn elements, so it is done here.)
 */
function checkHomogeneous(nodes: Node[], what: string, optionalIndices: readonly number[] = []): void {
  const types = nodes.map((n, i) => entryType(n, optionalIndices.includes(i)));
  const first = types.find((t) => t !== undefined);
  types.forEach((t, i) => {
    if (!first || !t || t.matches(first)) return;
    throw new LiteralError(`${what}, expected type '${first.name}' but found '${t.name}'`, nodes[i].start);
  });
}

const INT64_LIMIT = 2n ** 63n;
/** The literal 2^63 written right after a minus: the smallest int, the one literal past the limit allowed. */
const negatedLimits = new WeakSet<Node>();

/** Integer literals must fit in 64 bits; the parser reads `-9223372036854775808` as minus 2^63. */
function checkIntLiteral(node: Node): void {
  if (node.op === '-_' && node.args?.op === 'value' && node.args.args === INT64_LIMIT && node.args.start === node.start + 1) {
    negatedLimits.add(node.args);
  }
  if (node.op === 'value' && typeof node.args === 'bigint' && node.args >= INT64_LIMIT && !negatedLimits.has(node)) {
    throw new LiteralError('invalid int literal', node.start);
  }
}

/** Rejects mixed literals, out-of-range integers, and constant regexes, durations and timestamps that could never evaluate. */
function validateLiterals(node: Node): void {
  checkIntLiteral(node);
  if (node.op === 'list') checkHomogeneous(node.args, 'List elements must have the same type', node.meta.optionalIndices);
  if (node.op === 'map') {
    checkHomogeneous((node.args as Node[][]).map((e) => e[0]), 'Map key uses wrong type');
    checkHomogeneous((node.args as Node[][]).map((e) => e[1]), 'Map value uses wrong type', node.meta.optionalIndices);
  }
  if (node.op !== 'call' && node.op !== 'rcall') return;
  const name: string = node.args[0];
  const args: Node[] = node.op === 'rcall' ? [node.args[1], ...node.args[2]] : node.args[1];
  if (REGEX_FUNCTIONS.has(name) && args.length >= 2) {
    const pattern = constantString(args[1]);
    if (pattern === undefined) return;
    try {
      compileRegex(pattern);
    } catch (err) {
      throw new LiteralError((err as Error).message, args[1].start);
    }
  }
  const text = node.op === 'call' && args.length === 1 ? constantString(args[0]) : undefined;
  if (text === undefined) return;
  if (name === 'duration' && parseDuration(text) === undefined) throw new LiteralError(`invalid duration: "${text}"`, args[0].start);
  if (name === 'timestamp' && (!RFC3339.test(text) || Number.isNaN(Date.parse(text)))) {
    throw new LiteralError(`invalid timestamp: "${text}"`, args[0].start);
  }
}

function featuresOf(node: Node): FeatureUse[] {
  const out: FeatureUse[] = [];
  if (node.op === '.?' || node.op === '[?]' || node.meta.optionalIndices || node.checkedType?.kind === 'optional') {
    out.push({ feature: 'optional types', since: RELEASE_1_29, offset: node.start });
  }
  if ((node.op === 'call' || node.op === 'rcall') && !node.meta.alternate) {
    const since = FUNCTION_RELEASES.get(node.args[0]);
    if (since) out.push({ feature: `function ${node.args[0]}`, since, offset: node.start });
  }
  if (ORDERING.has(node.op)) {
    const [l, r] = node.args as Node[];
    const lt = l.checkedType?.name;
    const rt = r.checkedType?.name;
    if (lt && rt && lt !== rt && NUMERIC.has(lt) && NUMERIC.has(rt)) {
      out.push({ feature: 'cross-type numeric comparisons', since: RELEASE_1_29, offset: node.start });
    }
  }
  return out;
}

interface Checker {
  check(node: Node, ctx: unknown): unknown;
  createError(code: string, message: string, node: Node): Error;
  getType(name: string): unknown;
}

interface Interpreter {
  run(node: Node, ctx: unknown): unknown;
  debugType(v: unknown): { fieldLazy(obj: unknown, key: string, node: Node, ev: unknown): unknown };
}

/** has() on any operand, where the interpreter only accepts a chain of fields from a variable. */
function generalHas(select: Node): Record<string, unknown> {
  return {
    args: [select],
    typeCheck(checker: Checker, _m: unknown, ctx: unknown) {
      if (select.op !== '.') throw checker.createError('invalid_macro_argument', 'has() invalid argument', select);
      checker.check(select.args[0], ctx);
      return checker.getType('bool');
    },
    evaluate(ev: Interpreter, _m: unknown, ctx: unknown) {
      let target = ev.run(select.args[0], ctx);
      if (target instanceof Optional) {
        // A field of an empty optional is absent; of a present one, it is the value's field.
        if (!target.hasValue()) return false;
        target = target.value();
      }
      return ev.debugType(target).fieldLazy(target, select.args[1], select, ev) !== undefined;
    },
  };
}

function rootOfSelects(node: Node): Node {
  let n = node;
  while (n.op === '.' || n.op === '.?') n = n.args[0];
  return n;
}

/** Adjusts a parsed tree before it is type checked. */
export function prepare(root: Node): void {
  const seen = new Set<Node>();
  const visit = (node: Node): void => {
    if (seen.has(node)) return;
    seen.add(node);
    const macro = node.meta.macro;
    if (macro && node.op === 'call' && node.args[0] === 'has') {
      const select: Node = node.args[1][0];
      if (select.op === '.' && rootOfSelects(select).op !== 'id') {
        (node as unknown as { setMeta(k: string, v: unknown): void }).setMeta('macro', generalHas(select));
      }
    }
    for (const child of children(node)) visit(child);
  };
  nodeClass ??= Object.getPrototypeOf(root).constructor;
  visit(root);
}

function install(node: Node, stepCharge: number): void {
  const op = node.op;
  if ((op === 'call' || op === 'rcall') && node.meta.macro) {
    chargeOnEvaluate(node, macroCharge(node) + stepCharge);
    return;
  }
  if ((op === 'call' || op === 'rcall') && !node.meta.alternate && node.handle) hookCall(node);
  else if (BINARY.has(op) && node.handle) hookOperator(node);
  let units = stepCharge;
  switch (op) {
    case 'id': if (!node.meta.alternate) units += SELECT_AND_IDENT_COST; break;
    case '.': case '.?': case '[]': case '[?]': units += SELECT_AND_IDENT_COST; break;
    case '!_': case '-_': case 'accuPush': case 'accuInc': units += 1; break;
    case 'list': units += LIST_CREATE_COST; break;
    case 'map': units += MAP_CREATE_COST; break;
  }
  chargeOnEvaluate(node, units);
}

/**
 * Installs the hooks on a type-checked tree (once; programs share it) and
 * returns the versioned features it uses. Throws LiteralError for invalid
 * constant arguments.
 */
export function instrument(root: Node): FeatureUse[] {
  nodeClass ??= Object.getPrototypeOf(root).constructor;
  const seen = new Set<Node>();
  const stepCharges = new Map<Node, number>();
  const features: FeatureUse[] = [];
  const visit = (node: Node): void => {
    if (seen.has(node)) return;
    seen.add(node);
    if (node.op === 'comprehension') {
      stepCharges.set(node.args.step, ITERATION_COST + (node.args.kind === 'quantifier' ? QUANTIFIER_TEST_COST : 0));
    }
    validateLiterals(node);
    features.push(...featuresOf(node));
    install(node, stepCharges.get(node) ?? 0);
    for (const child of children(node)) visit(child);
  };
  visit(root);
  return features;
}
