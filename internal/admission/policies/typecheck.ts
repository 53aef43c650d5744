// Type checking of a ValidatingAdmissionPolicy's expressions against the
// schemas of the kinds its resource rules name (rules with wildcards name no
// kind; a policy naming none is checked with a dynamic object), as the status
// controller reports them in status.typeChecking.
import type { ApiObject } from '../../apimachinery/meta.js';
import type { Schema } from '../../cel/index.js';
import { resourceTable } from '../../registry/resources.js';
import { compileExpression } from './expressions.js';
import type { Obj } from './policy.js';
import { kindSchema } from './schemas.js';

interface Gvk { group: string; version: string; kind: string }

export interface ExpressionWarning { fieldRef: string; warning: string }

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const gvkString = (g: Gvk): string => `${g.group}/${g.version}, Kind=${g.kind}`;

/** The kinds the policy's resource rules name explicitly. */
function matchedKinds(spec: Obj): Gvk[] {
  const table = resourceTable();
  const out = new Map<string, Gvk>();
  const rules: Obj[] = Array.isArray(spec.matchConstraints?.resourceRules) ? spec.matchConstraints.resourceRules : [];
  for (const rule of rules) {
    const [groups, versions, resources] = [strings(rule.apiGroups), strings(rule.apiVersions), strings(rule.resources)];
    if ([...groups, ...versions, ...resources].some((s) => s.includes('*'))) continue;
    for (const group of groups) for (const version of versions) for (const resource of resources) {
      const entry = table.find((e) => e.group === group && e.version === version && e.resource === resource);
      if (entry) out.set(`${group}/${version}/${entry.kind}`, { group, version, kind: entry.kind });
    }
  }
  return [...out.values()];
}

function paramSchema(spec: Obj): Schema | undefined {
  const apiVersion = String(spec.paramKind?.apiVersion ?? '');
  if (!spec.paramKind?.kind || !apiVersion) return undefined;
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return kindSchema({ group, version, kind: spec.paramKind.kind });
}

/** The expressions checked, with the field each sits in. */
function expressionsOf(spec: Obj): Array<{ fieldRef: string; expression: string }> {
  const out: Array<{ fieldRef: string; expression: string }> = [];
  (Array.isArray(spec.validations) ? spec.validations : []).forEach((v: Obj, i: number) => {
    if (typeof v.expression === 'string') out.push({ fieldRef: `spec.validations[${i}].expression`, expression: v.expression });
    if (typeof v.messageExpression === 'string' && v.messageExpression) out.push({ fieldRef: `spec.validations[${i}].messageExpression`, expression: v.messageExpression });
  });
  return out;
}

/** The warnings of every expression that does not type check against some matched kind. */
export function typeCheck(policy: ApiObject): ExpressionWarning[] {
  const spec = (policy.spec ?? {}) as Obj;
  const kinds = matchedKinds(spec);
  const params = paramSchema(spec);
  const targets: Array<{ gvk?: Gvk; typed: Record<string, Schema> }> = kinds.length === 0 ? [{ typed: params ? { params } : {} }]
    : kinds.map((gvk) => {
      const object = kindSchema(gvk);
      return { gvk, typed: { ...(object ? { object, oldObject: object } : {}), ...(params ? { params } : {}) } };
    });
  const warnings: ExpressionWarning[] = [];
  for (const { fieldRef, expression } of expressionsOf(spec)) {
    const issues = targets.flatMap(({ gvk, typed }) => {
      const { error } = compileExpression(expression, typed);
      if (!error) return [];
      const message = error.replace(/^compilation failed: /, '');
      return [gvk ? `${gvkString(gvk)}: ${message}` : message];
    });
    if (issues.length) warnings.push({ fieldRef, warning: issues.join('\n') });
  }
  return warnings;
}
