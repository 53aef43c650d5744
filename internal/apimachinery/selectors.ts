// Label and field selectors of list, watch and deletecollection.
import { badRequest } from './status.js';
import { qualifiedName } from './validation.js';

type Labels = Record<string, string> | undefined;
export type Matcher = (labels: Labels) => boolean;

export type LabelRequirement =
  | { key: string; op: 'exists' | '!exists' }
  | { key: string; op: '=' | '!=' | 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; values: [string] };

const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) { parts.push(current); current = ''; } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim());
}

function checkKey(key: string, selector: string): string {
  if (!key || qualifiedName('key', key).length) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
  return key;
}

function checkValue(value: string, selector: string): string {
  if (value.length > 63 || !VALUE.test(value)) throw badRequest(`unable to parse requirement: invalid label value "${value}" in selector "${selector}"`);
  return value;
}

function parseRequirement(text: string, selector: string): LabelRequirement {
  let m = /^(!?)\s*([^\s!=<>(),]+)$/.exec(text);
  if (m) return { key: checkKey(m[2], selector), op: m[1] ? '!exists' : 'exists' };
  m = /^([^\s!=<>(),]+)\s*(==|=|!=|>|<)\s*([^\s!=<>(),]*)$/.exec(text);
  if (m) {
    const key = checkKey(m[1], selector);
    if (m[2] === '>' || m[2] === '<') {
      if (!/^-?\d+$/.test(m[3])) throw badRequest(`unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer in selector "${selector}"`);
      return { key, op: m[2] === '>' ? 'gt' : 'lt', values: [m[3]] };
    }
    return { key, op: m[2] === '!=' ? '!=' : '=', values: [checkValue(m[3], selector)] };
  }
  m = /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(text);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim());
    if (values.length === 1 && values[0] === '' && m[2] === 'in') throw badRequest(`unable to parse requirement: for 'in', 'notin' operators, values set can't be empty in selector "${selector}"`);
    return { key: checkKey(m[1], selector), op: m[2] as 'in' | 'notin', values: values.map((v) => checkValue(v, selector)) };
  }
  throw badRequest(`unable to parse requirement: found '${text}', expected: in, notin, =, ==, !=, gt, lt in selector "${selector}"`);
}

function matches(r: LabelRequirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels![r.key] : undefined;
  switch (r.op) {
    case 'exists': return has;
    case '!exists': return !has;
    case '=': case 'in': return has && r.values.includes(value!);
    case '!=': case 'notin': return !has || !r.values.includes(value!);
    case 'gt': return has && /^-?\d+$/.test(value!) && Number(value) > Number(r.values[0]);
    case 'lt': return has && /^-?\d+$/.test(value!) && Number(value) < Number(r.values[0]);
  }
}

/** The requirements of a label selector; a bad one throws 400. */
export function parseLabelRequirements(selector: string | undefined | null): LabelRequirement[] {
  if (!selector || !selector.trim()) return [];
  return splitTopLevel(selector).map((t) => parseRequirement(t, selector));
}

/** Parses a label selector; an empty one matches everything; a bad one throws 400. */
export function parseLabelSelector(selector: string | undefined | null): Matcher | undefined {
  if (!selector || !selector.trim()) return undefined;
  const requirements = splitTopLevel(selector).map((t) => parseRequirement(t, selector));
  return (labels) => requirements.every((r) => matches(r, labels));
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Splits on an unescaped separator, unescaping `\,`, `\=`, `\!` and `\\`. */
function splitEscaped(text: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && i + 1 < text.length) { cur += text[i] + text[++i]; continue; }
    if (text[i] === sep) { out.push(cur); cur = ''; } else cur += text[i];
  }
  out.push(cur);
  return out;
}
const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

/** Parses a field selector into requirements; a bad one throws 400. */
export function parseFieldSelector(selector: string | undefined | null): FieldRequirement[] {
  if (!selector || !selector.trim()) return [];
  return splitEscaped(selector, ',').map((term) => {
    const parts = splitTerm(term.trim());
    if (!parts) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const [field, op, value] = parts;
    return { field: unescape(field.trim()), op, value: unescape(value) };
  });
}

/** A term's field, operator (`=`, `==`, `!=`) and value, split at its first unescaped `=` or `!` (a scan, linear in the term). */
function splitTerm(term: string): [string, '=' | '!=', string] | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '\\') {
      if (i + 1 >= term.length || term[i + 1] === '\n') return undefined;
      i++;
    } else if (c === '=' || c === '!') {
      if (i === 0 || (c === '!' && term[i + 1] !== '=')) return undefined;
      const value = term.slice(i + (c === '!' || term[i + 1] === '=' ? 2 : 1));
      return value.includes('\n') ? undefined : [term.slice(0, i), c === '!' ? '!=' : '=', value];
    }
  }
  return undefined;
}

/** Whether the field values of one object satisfy every requirement. */
export function fieldsMatch(requirements: FieldRequirement[], fields: Record<string, string | undefined>): boolean {
  return requirements.every((r) => ((fields[r.field] ?? '') === r.value) === (r.op === '='));
}

/** A LabelSelector object (`matchLabels`, `matchExpressions`) in its string form, as Scale reports it. */
export function formatLabelSelector(selector: unknown): string {
  if (typeof selector !== 'object' || selector === null) return '';
  const { matchLabels = {}, matchExpressions = [] } = selector as {
    matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  };
  const parts = Object.entries(matchLabels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  for (const e of matchExpressions) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
