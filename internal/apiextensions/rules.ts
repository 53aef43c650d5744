// The validation rules of a CRD version (`x-svc-validations`), compiled once per
// version: each schema node's rules typed against that node (self, oldSelf),
// their worst-case cost checked against the per-rule and per-schema limits
// (rules-eval.ts runs them on writes).
import type { StatusCause } from '../apimachinery/status.js';
import {
  compile, CompileError, MAX_REQUEST_SIZE_BYTES, minSerializedSize, type Program, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
} from '../cel/index.js';
import { forbidden, invalid, required } from '../registry/causes.js';
import { isObject } from '../registry/values.js';
import { isEmbedded, LIST_MAP_KEYS, LIST_TYPE, type Schema, VALIDATIONS } from './structural.js';
import { resolveFieldPath } from './rules-fieldpath.js';

/** How many of the costliest rules are named when the schema's total is over its limit. */
const MOST_EXPENSIVE = 4;
const BOOL_REQUIRED = 'cel expression must evaluate to a bool';
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

export interface Rule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface CompiledRule {
  readonly source: Rule;
  readonly program: Program;
  readonly message?: Program;
  readonly usesOldSelf: boolean;
  /** `fieldPath` as a field path below the node (`spec.foo`), when the rule names one. */
  readonly fieldPath?: string;
}

/** The rules of one schema node and of the nodes below it. */
export interface RuleNode {
  readonly type: string;
  readonly rules: readonly CompiledRule[];
  /** Why each of the node's rules that does not compile failed: a stored one refuses every value of the node. */
  readonly compileErrors?: readonly string[];
  readonly properties?: ReadonlyMap<string, RuleNode>;
  readonly items?: RuleNode;
  readonly additional?: RuleNode;
  readonly allOf?: readonly RuleNode[];
  /** list-type map keys: old items are found by key; other lists have no old items. */
  readonly mapKeys?: readonly string[];
}

/** A rule problem found while compiling, with its path below the schema root (`properties[spec].x-svc-validations[0].rule`). */
export interface RulesCompilation {
  readonly root?: RuleNode;
  readonly causes: StatusCause[];
}

/** How a schema's rules are compiled. */
export interface RulesOptions {
  /** The schema is a resource's root (default true). */
  readonly resourceRoot?: boolean;
  /** The rules are already stored (an update that keeps the version's schema): no per-rule cost limit, every release's features. */
  readonly stored?: boolean;
}

interface Context {
  readonly stored: boolean;
  readonly causes: StatusCause[];
  readonly costs: { path: string; cost: number }[];
}

interface Place {
  /** Schema path of the node (`properties[spec].items`). */
  readonly path: string;
  /** How many values of this node a request can hold: the product of the bounds of the lists and maps above. */
  readonly cardinality: number | undefined;
  readonly resourceRoot: boolean;
  /** The schema path of the nearest list without keys above the node: oldSelf has no value there. */
  readonly uncorrelatable?: string;
}

const at = (path: string, child: string): string => (path ? `${path}.${child}` : child);

/** Compiles every rule of a (normalized) schema once. */
export function compileRules(schema: Schema, opts: RulesOptions = {}): RulesCompilation {
  const ctx: Context = { stored: opts.stored ?? false, causes: [], costs: [] };
  const root = node(schema, { path: '', cardinality: 1, resourceRoot: opts.resourceRoot ?? true }, ctx);
  const total = ctx.costs.reduce((sum, c) => sum + c.cost, 0);
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const costliest = [...ctx.costs].sort((a, b) => b.cost - a.cost).slice(0, MOST_EXPENSIVE);
    for (const c of costliest) ctx.causes.push(forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    ctx.causes.push(forbidden('', costMessage(`${VALIDATIONS} estimated rule cost total for entire OpenAPIv3 schema`, total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
  }
  return { root, causes: ctx.causes };
}

function node(s: Schema, place: Place, ctx: Context): RuleNode | undefined {
  const { rules, compileErrors } = compileNodeRules(s, place, ctx);
  const properties = new Map<string, RuleNode>();
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const child = node(prop, { ...place, path: at(place.path, `properties[${name}]`), resourceRoot: isEmbedded(prop) }, ctx);
    if (child) properties.set(name, child);
  }
  const isMapList = s[LIST_TYPE] === 'map';
  const items = isObject(s.items) ? node(s.items as Schema, {
    path: at(place.path, 'items'), cardinality: times(place.cardinality, s.maxItems), resourceRoot: isEmbedded(s.items as Schema),
    uncorrelatable: place.uncorrelatable ?? (isMapList ? undefined : place.path),
  }, ctx) : undefined;
  const extra = isObject(s.additionalProperties) ? s.additionalProperties as Schema : undefined;
  const additional = extra ? node(extra, {
    ...place, path: at(place.path, 'additionalProperties'), cardinality: times(place.cardinality, s.maxProperties as number | undefined), resourceRoot: isEmbedded(extra),
  }, ctx) : undefined;
  const allOf = (Array.isArray(s.allOf) ? s.allOf : []).map((sub, i) => node(sub as Schema, { ...place, path: at(place.path, `allOf[${i}]`) }, ctx))
    .filter((n): n is RuleNode => n !== undefined);
  if (!rules.length && !compileErrors.length && !properties.size && !items && !additional && !allOf.length) return undefined;
  return {
    type: typeof s.type === 'string' ? s.type : '', rules, ...(compileErrors.length ? { compileErrors } : {}),
    ...(properties.size ? { properties } : {}), ...(items ? { items } : {}), ...(additional ? { additional } : {}),
    ...(allOf.length ? { allOf } : {}),
    ...(isMapList ? { mapKeys: (s[LIST_MAP_KEYS] as string[] | undefined) ?? [] } : {}),
  };
}

const times = (cardinality: number | undefined, bound: unknown): number | undefined =>
  (cardinality === undefined || typeof bound !== 'number' ? undefined : cardinality * bound);

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A node's rules, each member of the type the rule kind declares (anything else is absent). */
const rulesOf = (s: Schema): Rule[] => (Array.isArray(s[VALIDATIONS]) ? (s[VALIDATIONS] as unknown[]).filter(isObject) : []).map((r) => ({
  rule: text(r.rule), message: text(r.message), messageExpression: text(r.messageExpression), reason: text(r.reason), fieldPath: text(r.fieldPath),
  ...(typeof r.optionalOldSelf === 'boolean' ? { optionalOldSelf: r.optionalOldSelf } : {}),
}));

/** The problems of the rules' shapes (empty rule, message with line breaks, unknown reason, bad fieldPath), everywhere in a schema. */
export function ruleShapeCauses(s: Schema, path = ''): StatusCause[] {
  const base = at(path, VALIDATIONS);
  const out = rulesOf(s).flatMap((r, i) => ruleShape(r, `${base}[${i}]`, s));
  for (const [name, prop] of Object.entries(s.properties ?? {})) out.push(...ruleShapeCauses(prop, at(path, `properties[${name}]`)));
  if (isObject(s.items)) out.push(...ruleShapeCauses(s.items as Schema, at(path, 'items')));
  if (isObject(s.additionalProperties)) out.push(...ruleShapeCauses(s.additionalProperties as Schema, at(path, 'additionalProperties')));
  (Array.isArray(s.allOf) ? s.allOf : []).forEach((sub, i) => out.push(...ruleShapeCauses(sub as Schema, at(path, `allOf[${i}]`))));
  return out;
}

/** Compiles the rules of a node whose rules are well shaped (ruleShapeCauses reports the others). */
function compileNodeRules(s: Schema, place: Place, ctx: Context): { rules: CompiledRule[]; compileErrors: string[] } {
  const list = rulesOf(s);
  const base = at(place.path, VALIDATIONS);
  const rules: CompiledRule[] = [];
  const compileErrors: string[] = [];
  if (!list.length || list.some((r, i) => ruleShape(r, `${base}[${i}]`, s).length)) return { rules, compileErrors };
  const cardinality = place.cardinality ?? Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize(s) + 1));
  list.forEach((r, i) => {
    const c = compileRule(r, s, `${base}[${i}]`, place, cardinality, ctx);
    if (typeof c === 'string') compileErrors.push(c);
    else rules.push(c);
  });
  return { rules, compileErrors };
}

export const NEWLINE = /[\n\r]+/;

function ruleShape(r: Rule, path: string, s: Schema): StatusCause[] {
  const causes: StatusCause[] = [];
  const rule = (r.rule ?? '').trim();
  const message = (r.message ?? '').trim();
  if (!rule) causes.push(required(`${path}.rule`, 'rule is not specified'));
  else if (r.message && !message) causes.push(invalid(`${path}.message`, r.message, 'must be non-empty if specified'));
  else if (NEWLINE.test(message)) causes.push(invalid(`${path}.message`, r.message, 'must not contain line breaks'));
  else if (NEWLINE.test(rule) && !message) causes.push(required(`${path}.message`, 'message must be specified if rule contains line breaks'));
  if (r.messageExpression && !r.messageExpression.trim()) causes.push(required(`${path}.messageExpression`, 'messageExpression must be non-empty if specified'));
  if (r.reason !== undefined && !REASONS.includes(r.reason)) {
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(r.reason)}: supported values: ${REASONS.map((x) => `"${x}"`).join(', ')}`, field: `${path}.reason` });
  }
  if (r.fieldPath !== undefined) {
    if (r.fieldPath && !r.fieldPath.trim()) causes.push(invalid(`${path}.fieldPath`, r.fieldPath, 'must be non-empty if specified'));
    if (NEWLINE.test(r.fieldPath)) causes.push(invalid(`${path}.fieldPath`, r.fieldPath, 'must not contain line breaks'));
    if (r.fieldPath && resolveFieldPath(r.fieldPath, s) === undefined) causes.push(invalid(`${path}.fieldPath`, r.fieldPath, 'must be a valid path'));
  }
  return causes;
}

/** A compiled rule, or why its rule does not compile (also a cause at its path). */
function compileRule(r: Rule, s: Schema, path: string, place: Place, cardinality: number, ctx: Context): CompiledRule | string {
  const options = { schema: s, resourceRoot: place.resourceRoot, optionalOldSelf: r.optionalOldSelf === true, stored: ctx.stored };
  const program = compileExpression(r.rule!, options, `${path}.rule`, r, 'compilation failed: ', ctx);
  if (typeof program === 'string') return program;
  if (program.outputType !== 'bool') {
    ctx.causes.push(invalid(`${path}.rule`, r, BOOL_REQUIRED));
    return BOOL_REQUIRED;
  }
  const cost = estimated(program) * cardinality;
  if (cost > STATIC_ESTIMATED_COST_LIMIT && !ctx.stored) ctx.causes.push(forbidden(`${path}.rule`, costMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
  ctx.costs.push({ path: `${path}.rule`, cost });
  const usesOldSelf = program.references('oldSelf');
  if (usesOldSelf && place.uncorrelatable !== undefined) {
    ctx.causes.push(invalid(`${path}.rule`, r.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${place.uncorrelatable || '<root>'}`));
  } else if (!usesOldSelf && r.optionalOldSelf !== undefined) {
    ctx.causes.push(invalid(`${path}.optionalOldSelf`, r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
  }
  let message: Program | undefined;
  if (r.messageExpression) {
    const compiled = compileExpression(r.messageExpression, options, `${path}.messageExpression`, r, 'messageExpression compilation failed: ', ctx);
    message = typeof compiled === 'string' ? undefined : compiled;
    if (message && message.outputType !== 'string') {
      ctx.causes.push(invalid(`${path}.messageExpression`, r, 'messageExpression must evaluate to a string'));
      message = undefined;
    } else if (message) {
      const messageCost = estimated(message);
      if (messageCost > STATIC_ESTIMATED_COST_LIMIT && !ctx.stored) {
        ctx.causes.push(forbidden(`${path}.messageExpression`, costMessage('estimated messageExpression cost', messageCost, STATIC_ESTIMATED_COST_LIMIT)));
      }
      ctx.costs.push({ path: `${path}.messageExpression`, cost: messageCost });
    }
  }
  const fieldPath = r.fieldPath ? resolveFieldPath(r.fieldPath, s) : undefined;
  return { source: r, program, usesOldSelf, ...(message ? { message } : {}), ...(fieldPath ? { fieldPath } : {}) };
}

/** The program, or why the expression does not compile (pushed as a cause at `path`). */
function compileExpression(expression: string, options: Parameters<typeof compile>[1], path: string, r: Rule, prefix: string, ctx: Context): Program | string {
  try {
    return compile(expression, options);
  } catch (err) {
    // Not only CompileError: a stored rule must give a cause, never an error out of the schema's compilation.
    const detail = `${prefix}${err instanceof CompileError ? err.message : String(err)}`;
    ctx.causes.push(invalid(path, r, detail));
    return detail;
  }
}

const estimated = (p: Program): number => p.estimateCost().cost;

/** The platform's words for an estimate over its limit. */
function costMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
