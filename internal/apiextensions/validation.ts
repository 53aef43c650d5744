// The validation of a CustomResourceDefinition, in the platform's words and at
// its field paths. Like the platform, it sees the CRD as its internal form
// does: when every version has the same schema (or subresources, printer
// columns, selectable fields) that part is checked once, at the top level
// (`spec.validation.openAPIV3Schema...`, `spec.subresources...`).
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import {
  dns1035Label, dns1123Subdomain, forbidden, immutable, invalid, notSupported, required,
} from '../registry/causes.js';
import { clientConfigCauses } from '../registry/kinds/admissionregistration.js';
import { asList, asObj, deepEqual, objects, str, type Obj } from '../registry/values.js';
import { API_APPROVED_ANNOTATION, isProtectedGroup, wellKnownValue } from '../names/index.js';
import { MAX_SCHEMA_DEPTH, PRESERVE_UNKNOWN_FIELDS, schemaDepth, schemaNodes } from './structural.js';
import { validateSchemaOfVersion } from './validation-schema.js';
import { validateColumn, validateDeprecationWarning, validateSelectableFields, validateSubresources } from './validation-version.js';

const SCOPES = ['Cluster', 'Namespaced'];
const STRATEGIES = ['None', 'Webhook'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** The DNS-1035 rule's message alone (no value prefix), as the names' mixed-case rule quotes it. */
const dns1035Detail = (path: string, value: string): string | undefined =>
  dns1035Label(path, value)[0]?.message?.replace(/^Invalid value: "(?:[^"\\]|\\.)*": /, '');

/** Which per-version parts are the same in every version (and so checked once at the top level). */
interface Hoisted { schema: boolean; subresources: boolean; columns: boolean; selectableFields: boolean }

function hoisted(versions: Obj[]): Hoisted {
  const same = (key: string) => versions.length > 0 && versions.every((v) => deepEqual(v[key], versions[0][key]));
  return { schema: same('schema'), subresources: same('subresources'), columns: same('additionalPrinterColumns'), selectableFields: same('selectableFields') };
}

const schemaOf = (v: Obj | undefined): unknown => asObj(asObj(v?.schema)?.openAPIV3Schema);
const statusEnabled = (subresources: unknown): boolean => asObj(asObj(subresources)?.status) !== undefined;

/** Every cause of a create (old undefined) or spec update of a CustomResourceDefinition. */
export function validateCustomResourceDefinition(crd: ApiObject, old?: ApiObject): StatusCause[] {
  const spec = asObj(crd.spec) ?? {};
  const names = asObj(spec.names) ?? {};
  const group = str(spec.group) ?? '';
  const tooDeep = depthCauses(objects(spec.versions));
  if (tooDeep.length) return tooDeep;
  const out: StatusCause[] = [];
  if (crd.metadata?.name !== `${names.plural ?? ''}.${group}`) out.push(invalid('metadata.name', crd.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  out.push(...specCauses(spec, old));
  if (old) out.push(...updateCauses(spec, old), ...storedVersionCauses(crd, spec));
  out.push(...apiApprovalCauses(crd, old));
  if (spec.preserveUnknownFields === true && asObj(old?.spec)?.preserveUnknownFields !== true) {
    out.push(invalid('spec.preserveUnknownFields', true, `cannot set to true, set ${PRESERVE_UNKNOWN_FIELDS} to true in spec.versions[*].schema instead`));
  }
  return out;
}

/** Schemas nested deeper than the walks below may recurse are refused before any of them runs. */
function depthCauses(versions: Obj[]): StatusCause[] {
  return versions.flatMap((v, i) => (schemaDepth(schemaOf(v)) > MAX_SCHEMA_DEPTH
    ? [invalid(`spec.versions[${i}].schema.openAPIV3Schema`, '', `must not nest schemas more than ${MAX_SCHEMA_DEPTH} levels deep`)] : []));
}

type Approval = 'missing' | 'bypassed' | 'approved' | 'invalid';
const APPROVAL_DOC = 'see https://github.com/kubernetes/enhancements/pull/1111';

function approvalOf(crd: ApiObject | undefined): { state: Approval; value?: string } {
  const value = wellKnownValue(crd?.metadata?.annotations, API_APPROVED_ANNOTATION);
  if (!value) return { state: 'missing' };
  if (value.startsWith('unapproved')) return { state: 'bypassed', value };
  try {
    if (new URL(value).host) return { state: 'approved', value };
  } catch {
    // not a URL
  }
  return { state: 'invalid', value };
}

/** A CRD in a group the project owns says where its API was approved (or that it was not). */
function apiApprovalCauses(crd: ApiObject, old: ApiObject | undefined): StatusCause[] {
  if (!isProtectedGroup(str(asObj(crd.spec)?.group) ?? '')) return [];
  const now = approvalOf(crd);
  if (old && approvalOf(old).state === now.state) return [];
  const field = `metadata.annotations[${API_APPROVED_ANNOTATION.own}]`;
  if (now.state === 'missing') return [required(field, `protected groups must have approval annotation "${API_APPROVED_ANNOTATION.own}", ${APPROVAL_DOC}`)];
  if (now.state === 'invalid') {
    return [invalid(field, now.value, `protected groups must have approval annotation "${API_APPROVED_ANNOTATION.own}" with either a URL or a reason starting with "unapproved", ${APPROVAL_DOC}`)];
  }
  return [];
}

function specCauses(spec: Obj, old: ApiObject | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const group = str(spec.group) ?? '';
  if (!group) out.push(required('spec.group'));
  else if (dns1123Subdomain('spec.group', group).length) out.push(...dns1123Subdomain('spec.group', group));
  else if (!group.includes('.')) out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  if (!spec.scope) out.push(required('spec.scope'));
  else if (!SCOPES.includes(spec.scope as string)) out.push(notSupported('spec.scope', spec.scope, SCOPES));
  const versions = objects(spec.versions);
  const top = hoisted(versions);
  if (!top.schema || !schemaOf(versions[0])) {
    versions.forEach((v, i) => { if (!schemaOf(v)) out.push(required(`spec.versions[${i}].schema.openAPIV3Schema`)); });
  }
  if (spec.preserveUnknownFields === true && versions.some((v) => hasDefaults(schemaOf(v)))) {
    out.push(invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  }
  out.push(...versionsCauses(versions, top, objects(asObj(old?.spec)?.versions)));
  out.push(...namesCauses(asObj(spec.names) ?? {}, 'spec.names'));
  out.push(...hoistedCauses(versions, top, old));
  const strategy = asObj(spec.conversion)?.strategy;
  if (spec.preserveUnknownFields === true && strategy !== undefined && strategy !== 'None') {
    out.push(invalid('spec.conversion.strategy', strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  out.push(...conversionCauses(asObj(spec.conversion), old));
  return out;
}

/** The parts every version shares, checked once at their top-level paths. */
function hoistedCauses(versions: Obj[], top: Hoisted, old: ApiObject | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const first = versions[0];
  const schema = schemaOf(first);
  if (top.schema && schema) {
    const unchanged = objects(asObj(old?.spec)?.versions).some((v) => deepEqual(schemaOf(v), schema));
    out.push(...validateSchemaOfVersion(schema, versions.some((v) => statusEnabled(v.subresources)), 'spec.validation', unchanged));
  }
  if (top.subresources) out.push(...validateSubresources(asObj(first?.subresources), schema, 'spec.subresources'));
  if (top.columns) objects(first?.additionalPrinterColumns).forEach((c, i) => out.push(...validateColumn(c, `spec.additionalPrinterColumns[${i}]`)));
  if (top.selectableFields && asList(first?.selectableFields).length) {
    out.push(...(schema ? validateSelectableFields(objects(first.selectableFields), schema, 'spec.selectableFields')
      : [invalid('spec.selectableFields', '', 'selectableFields may only be set when validations.schema is included')]));
  }
  return out;
}

function versionsCauses(versions: Obj[], top: Hoisted, oldVersions: Obj[]): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<unknown>();
  let unique = true;
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    out.push(...dns1035Label(`${at}.name`, str(v.name) ?? ''));
    out.push(...validateDeprecationWarning(v, at));
    const unchanged = oldVersions.some((o) => o.name === v.name && deepEqual(schemaOf(o), schemaOf(v)));
    if (!top.schema) out.push(...validateSchemaOfVersion(schemaOf(v), statusEnabled(v.subresources), `${at}.schema`, unchanged));
    if (!top.subresources) out.push(...validateSubresources(asObj(v.subresources), schemaOf(v), `${at}.subresources`));
    if (!top.columns) objects(v.additionalPrinterColumns).forEach((c, j) => out.push(...validateColumn(c, `${at}.additionalPrinterColumns[${j}]`)));
    if (!top.selectableFields && asList(v.selectableFields).length) {
      out.push(...(schemaOf(v) ? validateSelectableFields(objects(v.selectableFields), schemaOf(v), `${at}.selectableFields`)
        : [invalid(`${at}.selectableFields`, '', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included')]));
    }
  });
  if (!unique) out.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (versions.filter((v) => v.storage === true).length !== 1) out.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  // The internal form also names the first version `spec.version`, so a bad first name is reported there too.
  if (versions.length && str(versions[0].name)) out.push(...dns1035Label('spec.version', str(versions[0].name)!));
  return out;
}

/** spec.names: plural, singular, kind and listKind set, each in its DNS form. */
function namesCauses(names: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  for (const f of ['plural', 'singular', 'kind', 'listKind']) if (!names[f]) out.push(required(`${path}.${f}`));
  for (const f of ['plural', 'singular']) if (typeof names[f] === 'string' && names[f]) out.push(...dns1035Label(`${path}.${f}`, names[f] as string));
  for (const f of ['kind', 'listKind']) {
    const value = str(names[f]);
    const detail = value ? dns1035Detail(`${path}.${f}`, value.toLowerCase()) : undefined;
    if (detail) out.push(invalid(`${path}.${f}`, value, `may have mixed case, but should otherwise match: ${detail}`));
  }
  asList(names.shortNames).forEach((s, i) => out.push(...dns1035Label(`${path}.shortNames[${i}]`, String(s))));
  if (names.kind && names.kind === names.listKind) out.push(invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  asList(names.categories).forEach((c, i) => out.push(...dns1035Label(`${path}.categories[${i}]`, String(c))));
  return out;
}

function conversionCauses(conversion: Obj | undefined, old: ApiObject | undefined): StatusCause[] {
  if (!conversion) return [];
  const at = 'spec.conversion';
  const out: StatusCause[] = [];
  const strategy = conversion.strategy;
  if (!strategy) out.push(required(`${at}.strategy`));
  else if (!STRATEGIES.includes(strategy as string)) out.push(notSupported(`${at}.strategy`, strategy, STRATEGIES));
  const webhook = asObj(conversion.webhook);
  const clientConfig = asObj(webhook?.clientConfig);
  const reviewVersions = asList(webhook?.conversionReviewVersions);
  if (strategy === 'Webhook') {
    if (!clientConfig) out.push(required(`${at}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    else out.push(...clientConfigCauses(`${at}.webhookClientConfig`, clientConfig));
    out.push(...reviewVersionCauses(reviewVersions, requireKnownReviewVersion(old), `${at}.conversionReviewVersions`));
  } else {
    if (clientConfig) out.push(forbidden(`${at}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions.length) out.push(forbidden(`${at}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return out;
}

/** A CRD stored with no known review version keeps being accepted without one. */
function requireKnownReviewVersion(old: ApiObject | undefined): boolean {
  const versions = asList(asObj(asObj(asObj(old?.spec)?.conversion)?.webhook)?.conversionReviewVersions);
  return versions.length === 0 || versions.some((v) => REVIEW_VERSIONS.includes(v as string));
}

function reviewVersionCauses(versions: unknown[], requireKnown: boolean, path: string): StatusCause[] {
  if (!versions.length) return [required(path)];
  const out: StatusCause[] = [];
  const seen = new Set<unknown>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      out.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    out.push(...dns1035Label(`${path}[${i}]`, String(v)));
  });
  if (requireKnown && !versions.some((v) => REVIEW_VERSIONS.includes(v as string))) {
    out.push(invalid(path, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
  return out;
}

const isEstablished = (crd: ApiObject): boolean =>
  objects(asObj(crd.status)?.conditions).some((c) => c.type === 'Established' && c.status === 'True');

function updateCauses(spec: Obj, old: ApiObject): StatusCause[] {
  const oldSpec = asObj(old.spec) ?? {};
  const out: StatusCause[] = [];
  const names = asObj(spec.names) ?? {};
  const oldNames = asObj(oldSpec.names) ?? {};
  if (isEstablished(old)) {
    if (spec.scope !== oldSpec.scope) out.push(immutable('spec.scope', spec.scope));
    if (names.kind !== oldNames.kind) out.push(immutable('spec.names.kind', names.kind));
  }
  if (spec.group !== oldSpec.group) out.push(immutable('spec.group', spec.group));
  if (names.plural !== oldNames.plural) out.push(immutable('spec.names.plural', names.plural));
  return out;
}

/** Versions objects may still be stored in stay in spec.versions; the storage version is among them. */
function storedVersionCauses(crd: ApiObject, spec: Obj): StatusCause[] {
  const stored = asList(asObj(crd.status)?.storedVersions).filter((v): v is string => typeof v === 'string');
  if (!stored.length) return [];
  const path = 'status.storedVersions';
  const names = objects(spec.versions).map((v) => v.name);
  const out: StatusCause[] = [];
  for (const v of objects(spec.versions)) {
    if (v.storage === true && !stored.includes(v.name as string)) out.push(invalid(path, stored, `must have the storage version ${v.name}`));
  }
  stored.forEach((v, i) => {
    if (!names.includes(v)) {
      out.push(invalid(`${path}[${i}]`, v, `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`));
    }
  });
  return out;
}

/** Whether any schema node declares a default (values such as enums and examples are not looked into). */
function hasDefaults(schema: unknown): boolean {
  for (const [node] of schemaNodes(schema)) if (node.default !== undefined) return true;
  return false;
}
