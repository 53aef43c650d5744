// Worst-case cost of an expression, computed from the checked tree and the
// declared sizes of its inputs (maxLength, maxItems, maxProperties). The model
// is the runtime one applied to the largest values the schema admits, so no
// evaluation can cost more than the estimate.
import {
  AUTHZ_CHECK_COST, ITERATION_COST, LIST_CREATE_COST, MAP_CREATE_COST, QUANTIFIER_TEST_COST, regexCost,
  SELECT_AND_IDENT_COST, STRING_TRAVERSAL_FACTOR,
} from './cost.js';
import type { Node } from './instrument.js';
import { type BoundKeyword, type DeclType, MAX_REQUEST_SIZE_BYTES } from './schema.js';
import { stringSize } from './values.js';

/** A schema bound whose absence makes a value as large as a request can be. */
export interface MissingBound {
  readonly path: string;
  readonly keyword: BoundKeyword;
}

export interface CostEstimate {
  readonly cost: number;
  /** Bounds that, declared in the schema, would lower the estimate. */
  readonly missingBounds: readonly MissingBound[];
}

/** What the estimator knows of a value: its largest size and, if typed, its declaration. */
interface Shape {
  readonly size: number;
  readonly decl?: DeclType;
  readonly element?: Shape;
  readonly missing?: MissingBound;
}

const UNBOUNDED: Shape = { size: MAX_REQUEST_SIZE_BYTES - 2 };
const SCALAR: Shape = { size: 1 };
const MAP_KEY: Shape = { size: 0 };
const MAX_COST = 2 ** 64 - 1;

function shapeOf(decl: DeclType): Shape {
  const { size } = decl;
  const missing = !size.declared && size.keyword ? { path: decl.path, keyword: size.keyword } : undefined;
  return { size: size.max, decl, missing };
}

function elementOf(shape: Shape): Shape {
  if (shape.element) return shape.element;
  const d = shape.decl;
  return d?.kind === 'list' ? shapeOf(d.element) : UNBOUNDED;
}

function fieldOf(shape: Shape, field: string): Shape {
  const d = shape.decl;
  if (d?.kind === 'object') {
    const f = d.fieldTypes.get(field);
    return f ? shapeOf(f) : UNBOUNDED;
  }
  if (d?.kind === 'map') return shapeOf(d.value);
  return UNBOUNDED;
}

/** The value an index expression reads: a list element or a map value. */
function itemOf(shape: Shape): Shape {
  const d = shape.decl;
  if (d?.kind === 'map') return shapeOf(d.value);
  return elementOf(shape);
}

const traverse = (n: number): number => Math.ceil(n * STRING_TRAVERSAL_FACTOR);

interface Result { readonly cost: number; readonly shape: Shape }

class Estimator {
  readonly missing = new Map<string, MissingBound>();

  constructor(private readonly variables: ReadonlyMap<string, DeclType>) {}

  /** The size of a value as it enters a cost; remembers the bound that would reduce it. */
  private used(shape: Shape): number {
    if (shape.missing) this.missing.set(`${shape.missing.keyword} ${shape.missing.path}`, shape.missing);
    return shape.size;
  }

  private usedSmaller(a: Shape, b: Shape): number {
    return this.used(a.size <= b.size ? a : b);
  }

  run(node: Node, scope: ReadonlyMap<string, Shape>): Result {
    const { alternate, macro } = node.meta;
    if (alternate && node.op !== 'id') return this.run(alternate, scope);
    if (macro) return this.macro(node, scope);
    const a = node.args;
    switch (node.op) {
      case 'value': return { cost: 0, shape: literalShape(a) };
      case 'id': return alternate ? { cost: 0, shape: SCALAR } : { cost: SELECT_AND_IDENT_COST, shape: this.lookup(a, scope) };
      case '.': case '.?': {
        const operand = this.run(a[0], scope);
        return { cost: operand.cost + SELECT_AND_IDENT_COST, shape: fieldOf(operand.shape, a[1]) };
      }
      case '[]': case '[?]': {
        const [l, r] = [this.run(a[0], scope), this.run(a[1], scope)];
        return { cost: l.cost + r.cost + SELECT_AND_IDENT_COST, shape: itemOf(l.shape) };
      }
      case '!_': case '-_': {
        const operand = this.run(a, scope);
        return { cost: operand.cost + 1, shape: SCALAR };
      }
      case '&&': case '||': return this.sum(a, scope, 0, SCALAR);
      case '?:': {
        const [c, t, f] = (a as Node[]).map((n) => this.run(n, scope));
        return { cost: c.cost + Math.max(t.cost, f.cost), shape: t.shape.size >= f.shape.size ? t.shape : f.shape };
      }
      case 'list': return this.list(a, scope);
      case 'map': return this.sum((a as Node[][]).flat(), scope, MAP_CREATE_COST, { size: a.length });
      case 'call': case 'rcall': return this.call(node, scope);
      case 'comprehension': return this.comprehension(node, scope);
      case 'accuValue': return { cost: 0, shape: UNBOUNDED };
      case 'accuInc': return { cost: 1, shape: SCALAR };
      case 'accuPush': {
        const item = this.run(a, scope);
        return { cost: item.cost + 1, shape: UNBOUNDED };
      }
      default: return this.operator(node, scope);
    }
  }

  private lookup(name: string, scope: ReadonlyMap<string, Shape>): Shape {
    const local = scope.get(name);
    if (local) return local;
    const decl = this.variables.get(name);
    return decl ? shapeOf(decl) : UNBOUNDED;
  }

  private sum(nodes: Node[], scope: ReadonlyMap<string, Shape>, base: number, shape: Shape): Result {
    return { cost: nodes.reduce((c, n) => c + this.run(n, scope).cost, base), shape };
  }

  private list(items: Node[], scope: ReadonlyMap<string, Shape>): Result {
    const results = items.map((n) => this.run(n, scope));
    const element = results.reduce<Shape | undefined>((big, r) => (!big || r.shape.size > big.size ? r.shape : big), undefined);
    return { cost: results.reduce((c, r) => c + r.cost, LIST_CREATE_COST), shape: { size: items.length, element } };
  }

  private operator(node: Node, scope: ReadonlyMap<string, Shape>): Result {
    const [l, r] = (node.args as Node[]).map((n) => this.run(n, scope));
    const ls = l.shape;
    const rs = r.shape;
    const text = isText(node.args[0]);
    let own = 1;
    let shape = SCALAR;
    switch (node.op) {
      case '==': case '!=': own = traverse(this.usedSmaller(ls, rs)); break;
      case '<': case '<=': case '>': case '>=': if (text) own = traverse(this.usedSmaller(ls, rs)); break;
      case '+':
        if (text) own = traverse(this.used(ls) + this.used(rs));
        if (text || isList(node.args[0])) shape = { size: ls.size + rs.size, element: isList(node.args[0]) ? elementOf(ls) : undefined };
        break;
      case 'in': if (isList(node.args[1])) own = this.used(rs); break;
    }
    return { cost: l.cost + r.cost + own, shape };
  }

  private macro(node: Node, scope: ReadonlyMap<string, Shape>): Result {
    const m = node.meta.macro!;
    if (node.args[0] === 'has') {
      const props = m.macroHasProps;
      if (!props) return { cost: this.run((m.args as Node[])[0].args[0], scope).cost, shape: SCALAR };
      return { cost: this.run(props[props.length - 1], scope).cost + Math.max(0, props.length - 2), shape: SCALAR };
    }
    if (node.args[0] === 'bind') {
      const value = this.run(m.val as Node, scope);
      const inner = new Map(scope).set(m.var as string, value.shape);
      const body = this.run(m.exp as Node, inner);
      return { cost: value.cost + body.cost, shape: body.shape };
    }
    const receiver = this.run(m.receiver as Node, scope);
    if (m.exp) {
      // optMap / optFlatMap: the body runs once, with the variable bound to the optional's value.
      const body = this.run(m.exp as Node, new Map(scope).set(m.var as string, receiver.shape));
      return { cost: receiver.cost + body.cost + 1, shape: body.shape };
    }
    const arg = this.run(m.arg as Node, scope);
    return { cost: receiver.cost + arg.cost + 1, shape: arg.shape.size >= receiver.shape.size ? arg.shape : receiver.shape };
  }

  private comprehension(node: Node, scope: ReadonlyMap<string, Shape>): Result {
    const a = node.args;
    const iterable = this.run(a.iterable, scope);
    const iterations = this.used(iterable.shape);
    // Map keys have no declared size: the platform's estimator counts them as empty strings.
    const element = iterable.shape.decl?.kind === 'map' ? MAP_KEY : elementOf(iterable.shape);
    const inner = new Map(scope).set(a.iterVarName, element);
    const init = this.run(a.init, scope);
    const step = this.run(a.step, inner);
    const perIteration = step.cost + ITERATION_COST + (a.kind === 'quantifier' ? QUANTIFIER_TEST_COST : 0);
    const pushed = findPush(a.step);
    const shape = pushed ? { size: iterations, element: this.run(pushed.args, inner).shape } : SCALAR;
    return { cost: iterable.cost + init.cost + iterations * perIteration, shape };
  }

  private call(node: Node, scope: ReadonlyMap<string, Shape>): Result {
    const method = node.op === 'rcall';
    const argNodes: Node[] = method ? [node.args[1], ...node.args[2]] : node.args[1];
    const results = argNodes.map((n) => this.run(n, scope));
    const shapes = results.map((r) => r.shape);
    const name: string = node.args[0];
    const args = results.reduce((c, r) => c + r.cost, 0);
    const shape = resultShape(name, shapes);
    return { cost: args + this.callCost(name, shapes, argNodes, shape), shape };
  }

  /** Cost of walking a value as a tree, as the list functions do: 1 per scalar, a tenth per character. */
  private traversal(shape: Shape): number {
    const d = shape.decl;
    if (shape.element || d?.kind === 'list') return this.used(shape) * this.traversal(elementOf(shape));
    if (d?.kind === 'map') return this.used(shape) * (1 + this.traversal(shapeOf(d.value)));
    if (d && d.celType !== 'string' && d.celType !== 'bytes' && d.kind !== 'dyn') return 1;
    return Math.max(1, Math.floor(this.used(shape) * STRING_TRAVERSAL_FACTOR));
  }

  private callCost(name: string, args: Shape[], nodes: Node[], result: Shape): number {
    switch (name) {
      case 'check': return AUTHZ_CHECK_COST;
      case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
        return isText(nodes[0]) ? Math.floor(this.used(args[0]) * STRING_TRAVERSAL_FACTOR) : this.traversal(args[0]);
      case 'url': case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
      case 'quantity': case 'isQuantity': case 'startsWith': case 'endsWith': case 'bytes': case 'isURL':
        return traverse(this.used(args[0]));
      case 'string': return nodes[0]?.checkedType?.name === 'bytes' ? traverse(this.used(args[0])) : 1;
      case 'replace': case 'split': return traverse(2 * this.used(args[0]));
      case 'join': return traverse(2 * result.size);
      case 'matches': case 'find': case 'findAll': return regexCost(this.used(args[0]), this.used(args[1]));
      case 'contains': return traverse(this.used(args[0])) * traverse(this.used(args[1]));
      default: return 1;
    }
  }
}

function literalShape(v: unknown): Shape {
  if (typeof v === 'string') return { size: stringSize(v) };
  if (v instanceof Uint8Array) return { size: v.length };
  return SCALAR;
}

function isText(node: Node): boolean {
  const t = node.checkedType?.name;
  return t === 'string' || t === 'bytes';
}

function isList(node: Node): boolean {
  return node.checkedType?.kind === 'list';
}

function findPush(node: Node): Node | undefined {
  if (node.op === 'accuPush') return node;
  if (node.op === '?:') return findPush(node.args[1]) ?? findPush(node.args[2]);
  return undefined;
}

/** Largest result of the functions whose result size feeds later costs. */
function resultShape(name: string, args: Shape[]): Shape {
  const [receiver, first, second] = args;
  switch (name) {
    case 'lowerAscii': case 'upperAscii': case 'trim': case 'substring': case 'find': case 'string': case 'url':
      return { size: receiver?.size ?? 1, missing: receiver?.missing };
    case 'replace':
      return { size: receiver.size * Math.max(1, second?.size ?? 1) + (second?.size ?? 0), missing: receiver.missing };
    case 'split': case 'findAll':
      return { size: receiver.size + 1, element: { size: receiver.size, missing: receiver.missing }, missing: receiver.missing };
    case 'join': {
      const element = elementOf(receiver);
      return { size: receiver.size * element.size + Math.max(0, receiver.size - 1) * (first?.size ?? 0) };
    }
    case 'getQuery': case 'getHost': case 'getHostname': case 'getEscapedPath':
      return { size: receiver.size };
    case 'min': case 'max':
      return elementOf(receiver);
    default:
      return SCALAR;
  }
}

/** The worst-case cost of a checked tree given the declared variables. */
export function estimateTree(root: Node, variables: ReadonlyMap<string, DeclType>): CostEstimate {
  const estimator = new Estimator(variables);
  const { cost } = estimator.run(root, new Map());
  return { cost: Math.min(Math.ceil(cost), MAX_COST), missingBounds: [...estimator.missing.values()] };
}

/** The message for a rule whose estimate exceeds the limit, naming the bounds to add. */
export function estimateMessage(estimate: CostEstimate, limit: number): string {
  const factor = estimate.cost / limit;
  const bounds = estimate.missingBounds.map((b) => `${b.keyword} to ${b.path}`);
  const advice = bounds.length
    ? `try simplifying the rule, or add ${bounds.join(', ')}`
    : 'try simplifying the rule';
  return `estimated rule cost exceeds budget by factor of ${factor >= 100 ? Math.round(factor) : factor.toFixed(1)}x ` +
    `(estimated cost ${estimate.cost}, budget ${limit}); ${advice}`;
}
