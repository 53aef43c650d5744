// The admissionregistration group: webhook configurations and validating admission
// policies (v1), mutating admission policies (v1alpha1, v1beta1; served behind their gate).
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { duplicate, forbidden, invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, objects, setDefault, specOf, type Obj } from '../values.js';

const CATEGORIES = ['api-extensions'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MAX_TIMEOUT = 30;

function defaultRules(rules: unknown): void {
  for (const r of objects(rules)) setDefault(r, 'scope', '*');
}

function defaultWebhook(w: Obj, mutating: boolean): void {
  setDefault(w, 'failurePolicy', 'Fail');
  setDefault(w, 'matchPolicy', 'Equivalent');
  setDefault(w, 'namespaceSelector', {});
  setDefault(w, 'objectSelector', {});
  setDefault(w, 'timeoutSeconds', 10);
  if (mutating) setDefault(w, 'reinvocationPolicy', 'Never');
  const service = asObj(asObj(w.clientConfig)?.service);
  if (service) setDefault(service, 'port', 443);
  defaultRules(w.rules);
}

function ruleCauses(field: string, rules: unknown): Causes {
  return objects(rules).flatMap((r, i) => {
    const at = `${field}[${i}]`;
    const causes: Causes = [];
    for (const f of ['apiGroups', 'apiVersions', 'resources']) if (asList(r[f]).length === 0) causes.push(required(`${at}.${f}`));
    asList(r.operations).forEach((op, j) => causes.push(...oneOf(`${at}.operations[${j}]`, op, OPERATIONS)));
    causes.push(...oneOf(`${at}.scope`, r.scope, SCOPES));
    return causes;
  });
}

export function clientConfigCauses(field: string, config: Obj): Causes {
  const url = config.url;
  const service = asObj(config.service);
  if ((url === undefined) === (service === undefined)) return [required(field, 'exactly one of url or service is required')];
  if (typeof url === 'string') {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'https:') return [invalid(`${field}.url`, url, "'https' is the only allowed URL scheme")];
      if (parsed.search || parsed.hash) return [invalid(`${field}.url`, url, 'query parameters and fragments are not allowed')];
    } catch {
      return [invalid(`${field}.url`, url, 'must be a valid URL')];
    }
    return [];
  }
  const causes: Causes = [];
  if (!service?.name) causes.push(required(`${field}.service.name`));
  if (!service?.namespace) causes.push(required(`${field}.service.namespace`));
  const port = service?.port;
  if (typeof port === 'number' && (port < 1 || port > 65535)) causes.push(invalid(`${field}.service.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  return causes;
}

function webhookCauses(obj: ApiObject): Causes {
  const causes: Causes = [];
  const names = new Set<unknown>();
  objects(obj.webhooks).forEach((w, i) => {
    const at = `webhooks[${i}]`;
    if (typeof w.name !== 'string' || w.name === '') causes.push(required(`${at}.name`));
    else if (w.name.split('.').length < 3) causes.push(invalid(`${at}.name`, w.name, 'should be a domain with at least three segments separated by dots'));
    if (names.has(w.name)) causes.push(duplicate(`${at}.name`, w.name));
    names.add(w.name);
    causes.push(...clientConfigCauses(`${at}.clientConfig`, asObj(w.clientConfig) ?? {}));
    causes.push(...oneOf(`${at}.sideEffects`, w.sideEffects, ['None', 'NoneOnDryRun'], true));
    const versions = asList(w.admissionReviewVersions);
    if (versions.length === 0) causes.push(required(`${at}.admissionReviewVersions`, 'must specify one of v1, v1beta1'));
    else if (!versions.some((v) => REVIEW_VERSIONS.includes(v as string))) causes.push(invalid(`${at}.admissionReviewVersions`, versions, 'must include at least one of v1, v1beta1'));
    causes.push(...oneOf(`${at}.failurePolicy`, w.failurePolicy, ['Fail', 'Ignore']), ...oneOf(`${at}.matchPolicy`, w.matchPolicy, ['Equivalent', 'Exact']));
    if (typeof w.timeoutSeconds === 'number' && (w.timeoutSeconds < 1 || w.timeoutSeconds > MAX_TIMEOUT)) {
      causes.push(invalid(`${at}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    }
    causes.push(...oneOf(`${at}.reinvocationPolicy`, w.reinvocationPolicy, ['IfNeeded', 'Never']));
    causes.push(...labelSelector(`${at}.namespaceSelector`, w.namespaceSelector), ...labelSelector(`${at}.objectSelector`, w.objectSelector));
    causes.push(...ruleCauses(`${at}.rules`, w.rules));
  });
  return causes;
}

const webhookColumns = [nameColumn, column('Webhooks', 'integer', 'The number of webhooks.', (o) => asList(o.webhooks).length), ageColumn];

const mutatingwebhookconfigurations: KindSpec = {
  categories: CATEGORIES, tracksGeneration: true,
  defaults: (obj) => objects(obj.webhooks).forEach((w) => defaultWebhook(w, true)),
  validate: webhookCauses,
  tableColumns: webhookColumns,
};

const validatingwebhookconfigurations: KindSpec = {
  categories: CATEGORIES, tracksGeneration: true,
  defaults: (obj) => objects(obj.webhooks).forEach((w) => defaultWebhook(w, false)),
  validate: webhookCauses,
  tableColumns: webhookColumns,
};

function defaultPolicy(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'failurePolicy', 'Fail');
  defaultMatchResources(spec.matchConstraints);
}

function defaultMatchResources(value: unknown): void {
  const resources = asObj(value);
  if (!resources) return;
  setDefault(resources, 'matchPolicy', 'Equivalent');
  setDefault(resources, 'namespaceSelector', {});
  setDefault(resources, 'objectSelector', {});
  defaultRules(resources.resourceRules);
  defaultRules(resources.excludeResourceRules);
}

/** What validating and mutating policies share: match constraints, failure policy, paramKind. */
function policyCauses(spec: Obj): Causes {
  const causes: Causes = [];
  const constraints = asObj(spec.matchConstraints);
  if (!constraints) causes.push(required('spec.matchConstraints'));
  else {
    if (asList(constraints.resourceRules).length === 0) causes.push(required('spec.matchConstraints.resourceRules'));
    causes.push(...ruleCauses('spec.matchConstraints.resourceRules', constraints.resourceRules));
  }
  causes.push(...oneOf('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  const paramKind = asObj(spec.paramKind);
  if (paramKind && (!paramKind.apiVersion || !paramKind.kind)) causes.push(required('spec.paramKind', 'apiVersion and kind are required'));
  return causes;
}

function validatePolicy(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  if (asList(spec.validations).length === 0 && asList(spec.auditAnnotations).length === 0) {
    causes.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  }
  objects(spec.validations).forEach((v, i) => { if (!v.expression) causes.push(required(`spec.validations[${i}].expression`)); });
  return [...causes, ...policyCauses(spec)];
}

const validatingadmissionpolicies: KindSpec = {
  categories: CATEGORIES,
  defaults: defaultPolicy,
  validate: validatePolicy,
  tableColumns: [nameColumn,
    column('Validations', 'integer', 'The number of validations.', (o) => asList(specOf(o).validations).length),
    column('ParamKind', 'string', 'The kind of the parameter resource.', (o) => { const p = asObj(specOf(o).paramKind); return p ? `${p.apiVersion}/${p.kind}` : '<unset>'; }),
    ageColumn],
};

function defaultBinding(obj: ApiObject): void {
  const ref = asObj(specOf(obj).paramRef);
  if (ref) setDefault(ref, 'parameterNotFoundAction', 'Deny');
  defaultMatchResources(specOf(obj).matchResources);
}

const ACTIONS = ['Audit', 'Deny', 'Warn'];

function validatePolicyBinding(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = spec.policyName ? [] : [required('spec.policyName')];
  const actions = asList(spec.validationActions);
  if (actions.length === 0) causes.push(required('spec.validationActions'));
  const seen = new Set<unknown>();
  actions.forEach((a, i) => {
    causes.push(...oneOf(`spec.validationActions[${i}]`, a, ACTIONS));
    if (seen.has(a)) causes.push(duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) causes.push(invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  return [...causes, ...paramRefCauses(spec)];
}

function paramRefCauses(spec: Obj): Causes {
  const ref = asObj(spec.paramRef);
  if (!ref) return [];
  const causes: Causes = [];
  if (ref.name !== undefined && ref.selector !== undefined) causes.push(forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
  if (ref.name === undefined && ref.selector === undefined) causes.push(required('spec.paramRef', 'one of name or selector must be specified'));
  causes.push(...oneOf('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny'], true));
  return causes;
}

const validatingadmissionpolicybindings: KindSpec = {
  categories: CATEGORIES,
  defaults: defaultBinding,
  validate: validatePolicyBinding,
  tableColumns: [nameColumn,
    column('PolicyName', 'string', 'The policy bound.', (o) => specOf(o).policyName ?? ''),
    column('ParamRef', 'string', 'The parameter resource.', (o) => { const r = asObj(specOf(o).paramRef); return r ? `${r.namespace ? `${r.namespace}/` : ''}${r.name ?? '*'}` : '<unset>'; }),
    ageColumn],
};

const PATCH_TYPES = { ApplyConfiguration: 'applyConfiguration', JSONPatch: 'jsonPatch' } as const;

function mutationCauses(m: Obj, i: number): Causes {
  const field = `spec.mutations[${i}]`;
  const causes = oneOf(`${field}.patchType`, m.patchType, Object.keys(PATCH_TYPES), true);
  for (const [type, member] of Object.entries(PATCH_TYPES)) {
    const value = asObj(m[member]);
    if (m.patchType === type && !value?.expression) causes.push(required(`${field}.${member}.expression`));
    if (m.patchType !== type && value) causes.push(forbidden(`${field}.${member}`, `must not be set when patchType is not ${type}`));
  }
  return causes;
}

function validateMutatingPolicy(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = asList(spec.mutations).length === 0 ? [required('spec.mutations', 'mutations must contain at least one item')] : [];
  objects(spec.mutations).forEach((m, i) => causes.push(...mutationCauses(m, i)));
  causes.push(...oneOf('spec.reinvocationPolicy', spec.reinvocationPolicy, ['Never', 'IfNeeded'], true));
  return [...causes, ...policyCauses(spec)];
}

const mutatingadmissionpolicies: KindSpec = {
  categories: CATEGORIES,
  defaults: defaultPolicy,
  validate: validateMutatingPolicy,
  tableColumns: [nameColumn,
    column('Mutations', 'integer', 'The number of mutations.', (o) => asList(specOf(o).mutations).length),
    column('ParamKind', 'string', 'The kind of the parameter resource.', (o) => { const p = asObj(specOf(o).paramKind); return p ? `${p.apiVersion}/${p.kind}` : '<unset>'; }),
    ageColumn],
};

const mutatingadmissionpolicybindings: KindSpec = {
  categories: CATEGORIES,
  defaults: defaultBinding,
  validate: (obj) => [...(specOf(obj).policyName ? [] : [required('spec.policyName')]), ...paramRefCauses(specOf(obj))],
  tableColumns: validatingadmissionpolicybindings.tableColumns,
};

export const admissionregistrationKinds: Record<string, KindSpec> = {
  mutatingwebhookconfigurations, validatingwebhookconfigurations, validatingadmissionpolicies, validatingadmissionpolicybindings,
  mutatingadmissionpolicies, mutatingadmissionpolicybindings,
};
