// A schema's defaults must be values the schema accepts: known fields only
// (pruning would change them otherwise), valid embedded resources, every value
// check and validation rule of their node passed.
import type { StatusCause } from '../apimachinery/status.js';
import { invalid } from '../registry/causes.js';
import { deepEqual, isObject } from '../registry/values.js';
import { compileRules } from './rules.js';
import { evaluateRules } from './rules-eval.js';
import { isEmbedded, type Schema } from './structural.js';
import { pruneValue } from './structural-prune.js';
import { validateMarkers } from './validation-lists.js';
import { validateValue } from './validation-values.js';

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** Causes for every invalid default below `path` (the schema root, a resource root). */
export function validateDefaults(schema: Schema, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  walk(schema, path, true, false, out);
  return out;
}

function walk(s: Schema, path: string, resourceRoot: boolean, insideMeta: boolean, out: StatusCause[]): void {
  if (s.default !== undefined && !insideMeta) out.push(...checkDefault(s, `${path}.default`, resourceRoot || isEmbedded(s)));
  if (isObject(s.items)) walk(s.items as Schema, `${path}.items`, false, insideMeta, out);
  for (const [name, prop] of Object.entries(isObject(s.properties) ? s.properties as Record<string, Schema> : {})) {
    const meta = insideMeta || ((resourceRoot || isEmbedded(s)) && META_FIELDS.has(name));
    if (isObject(prop)) walk(prop, `${path}.properties[${name}]`, false, meta && !isEmbedded(prop), out);
  }
}

/** Field paths of causes found on the default value alone, placed under `<node>.default`. */
const under = (at: string, causes: StatusCause[]): StatusCause[] =>
  causes.map((c) => ({ ...c, field: !c.field ? at : c.field.startsWith('[') ? `${at}${c.field}` : `${at}.${c.field}` }));

function checkDefault(s: Schema, at: string, embedded: boolean): StatusCause[] {
  const value = s.default;
  const pruned = structuredClone(value);
  pruneValue(pruned, s, embedded);
  if (!deepEqual(pruned, value)) return [invalid(at, value, 'must not have unknown fields')];
  const markers = validateMarkers(value, s, '', embedded);
  if (markers.length) return under(at, markers);
  const values = validateValue(value, s, '');
  if (values.length) return under(at, values);
  const rules = compileRules(s, { resourceRoot: embedded });
  // As an update that keeps the default (transition rules), then as a create (every other rule).
  return rules.root ? under(at, [...evaluateRules(rules.root, value, value), ...evaluateRules(rules.root, value, undefined)]) : [];
}
