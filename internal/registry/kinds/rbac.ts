// The rbac.authorization group (v1): Role, ClusterRole, RoleBinding, ClusterRoleBinding.
import type { ApiObject } from '../../apimachinery/meta.js';
import { GROUP_RBAC, ownGroup } from '../../names/index.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { dns1123Subdomain, invalid, notSupported, pathSegmentName, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, objects, setDefault, type Obj } from '../values.js';

const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];

function ruleCauses(rules: unknown, namespaced: boolean): Causes {
  return objects(rules).flatMap((rule, i) => {
    const at = `rules[${i}]`;
    const causes: Causes = asList(rule.verbs).length ? [] : [required(`${at}.verbs`, 'verbs must contain at least one value')];
    const nonResource = asList(rule.nonResourceURLs).length > 0;
    if (nonResource) {
      if (namespaced) causes.push(invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (asList(rule.apiGroups).length || asList(rule.resources).length) causes.push(invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      return causes;
    }
    if (asList(rule.apiGroups).length === 0) causes.push(required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (asList(rule.resources).length === 0) causes.push(required(`${at}.resources`, 'resource rules must supply at least one resource'));
    return causes;
  });
}

function aggregationCauses(rule: unknown): Causes {
  const r = asObj(rule);
  if (!r) return [];
  const selectors = objects(r.clusterRoleSelectors);
  if (selectors.length === 0) return [required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  return selectors.flatMap((s, i) => labelSelector(`aggregationRule.clusterRoleSelectors[${i}]`, s));
}

/** Rewrites the group names a role's rules or a binding's references carry: stored in the product's spelling
 * (kubectl writes the upstream one), shown in the spelling of the group name a request used. */
function spellGroups(obj: ApiObject, spell: (group: string) => string): void {
  const ref = asObj(obj.roleRef);
  if (ref && typeof ref.apiGroup === 'string') ref.apiGroup = spell(ref.apiGroup);
  for (const s of objects(obj.subjects)) if (typeof s.apiGroup === 'string') s.apiGroup = spell(s.apiGroup);
  for (const rule of objects(obj.rules)) {
    if (Array.isArray(rule.apiGroups)) rule.apiGroups = rule.apiGroups.map((g) => (typeof g === 'string' ? spell(g) : g));
  }
}

/** Rules and references in the product's spelling, so they match requests. */
const defaultRuleGroups = (obj: ApiObject): void => spellGroups(obj, ownGroup);

/** Users and groups default to the RBAC group; service accounts keep none (the empty group, never written). */
function defaultSubjects(obj: ApiObject): void {
  spellGroups(obj, ownGroup);
  for (const s of objects(obj.subjects)) if (s.kind === 'User' || s.kind === 'Group') setDefault(s, 'apiGroup', GROUP_RBAC);
}

function subjectCauses(field: string, s: Obj, clusterScoped: boolean): Causes {
  const causes: Causes = [];
  if (!s.name) causes.push(required(`${field}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (typeof s.name === 'string' && s.name) causes.push(...dns1123Subdomain(`${field}.name`, s.name));
      if (s.apiGroup) causes.push(notSupported(`${field}.apiGroup`, s.apiGroup, ['']));
      if (clusterScoped && !s.namespace) causes.push(required(`${field}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== GROUP_RBAC) causes.push(notSupported(`${field}.apiGroup`, s.apiGroup, [GROUP_RBAC]));
      break;
    default:
      causes.push(notSupported(`${field}.kind`, s.kind, SUBJECT_KINDS));
  }
  return causes;
}

function bindingCauses(obj: ApiObject, old: ApiObject | undefined, roleKinds: string[]): Causes {
  const ref = asObj(obj.roleRef) ?? {};
  const causes: Causes = [];
  if (ref.apiGroup !== GROUP_RBAC) causes.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [GROUP_RBAC]));
  if (!roleKinds.includes(ref.kind as string)) causes.push(notSupported('roleRef.kind', ref.kind ?? '', roleKinds));
  if (typeof ref.name !== 'string' || ref.name === '') causes.push(required('roleRef.name'));
  else causes.push(...pathSegmentName('roleRef.name', ref.name));
  objects(obj.subjects).forEach((s, i) => causes.push(...subjectCauses(`subjects[${i}]`, s, roleKinds.length === 1)));
  const oldRef = asObj(old?.roleRef);
  if (oldRef && (oldRef.apiGroup !== ref.apiGroup || oldRef.kind !== ref.kind || oldRef.name !== ref.name)) {
    causes.push(invalid('roleRef', ref, 'cannot change roleRef'));
  }
  return causes;
}

function subjectsOf(o: ApiObject, kind: string): string {
  return objects(o.subjects).filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : String(s.name))).join(', ');
}

const bindingColumns = [nameColumn,
  column('Role', 'string', 'Role of the binding.', (o) => { const r = asObj(o.roleRef) ?? {}; return `${r.kind}/${r.name}`; }),
  ageColumn,
  column('Users', 'string', 'Users in the binding.', (o) => subjectsOf(o, 'User'), 1),
  column('Groups', 'string', 'Groups in the binding.', (o) => subjectsOf(o, 'Group'), 1),
  column('ServiceAccounts', 'string', 'ServiceAccounts in the binding.', (o) => subjectsOf(o, 'ServiceAccount'), 1)];

const roles: KindSpec = { nameRule: 'pathSegment', defaults: defaultRuleGroups, spellGroups, validate: (obj) => ruleCauses(obj.rules, true) };

const clusterroles: KindSpec = {
  nameRule: 'pathSegment', defaults: defaultRuleGroups, spellGroups,
  validate: (obj) => [...ruleCauses(obj.rules, false), ...aggregationCauses(obj.aggregationRule)],
};

const rolebindings: KindSpec = {
  nameRule: 'pathSegment', defaults: defaultSubjects, spellGroups, tableColumns: bindingColumns,
  validate: (obj, old) => bindingCauses(obj, old, ['ClusterRole', 'Role']),
};

const clusterrolebindings: KindSpec = {
  nameRule: 'pathSegment', defaults: defaultSubjects, spellGroups, tableColumns: bindingColumns,
  validate: (obj, old) => bindingCauses(obj, old, ['ClusterRole']),
};

export const rbacKinds: Record<string, KindSpec> = { roles, clusterroles, rolebindings, clusterrolebindings };
