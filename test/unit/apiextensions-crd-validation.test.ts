// CustomResourceDefinition validation: every rule with a failing case and a
// passing control, each asserting the cause's field and reason.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { validateCustomResourceDefinition } from '../../internal/apiextensions/validation.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import { API_APPROVED_ANNOTATION, group, UPSTREAM_DOMAIN } from '../../internal/names/index.js';

type Obj = Record<string, any>;
const ROOT = 'spec.validation.openAPIV3Schema';

/** A valid namespaced CRD with one version; `schema` replaces its spec's schema. */
function crd(spec: Obj = {}): ApiObject {
  return {
    apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      conversion: { strategy: 'None' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' }, name: { type: 'string' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
      }],
      ...spec,
    },
  };
}

const version = (c: ApiObject): Obj => (c.spec as Obj).versions[0];
const root = (c: ApiObject): Obj => version(c).schema.openAPIV3Schema;
const specProps = (c: ApiObject): Obj => root(c).properties.spec.properties;
const fields = (causes: StatusCause[]) => causes.map((c) => `${c.field} ${c.reason}`);

interface Case { name: string; bad: (c: ApiObject) => void; good: (c: ApiObject) => void; field: string; reason: string }

const cases: Case[] = [
  { name: 'name is <plural>.<group>', bad: (c) => { c.metadata!.name = 'gadgets.example.com'; }, good: () => undefined, field: 'metadata.name', reason: 'FieldValueInvalid' },
  { name: 'group required', bad: (c) => { (c.spec as Obj).group = ''; c.metadata!.name = 'widgets.'; }, good: () => undefined, field: 'spec.group', reason: 'FieldValueRequired' },
  { name: 'group has a dot', bad: (c) => { (c.spec as Obj).group = 'example'; c.metadata!.name = 'widgets.example'; }, good: (c) => { (c.spec as Obj).group = 'a.b'; c.metadata!.name = 'widgets.a.b'; }, field: 'spec.group', reason: 'FieldValueInvalid' },
  { name: 'scope required', bad: (c) => { delete (c.spec as Obj).scope; }, good: (c) => { (c.spec as Obj).scope = 'Cluster'; }, field: 'spec.scope', reason: 'FieldValueRequired' },
  { name: 'scope supported', bad: (c) => { (c.spec as Obj).scope = 'Global'; }, good: () => undefined, field: 'spec.scope', reason: 'FieldValueNotSupported' },
  { name: 'plural required', bad: (c) => { (c.spec as Obj).names.plural = ''; c.metadata!.name = '.example.com'; }, good: () => undefined, field: 'spec.names.plural', reason: 'FieldValueRequired' },
  { name: 'plural DNS-1035', bad: (c) => { (c.spec as Obj).names.plural = 'Widgets'; c.metadata!.name = 'Widgets.example.com'; }, good: () => undefined, field: 'spec.names.plural', reason: 'FieldValueInvalid' },
  { name: 'singular DNS-1035', bad: (c) => { (c.spec as Obj).names.singular = 'a_b'; }, good: (c) => { (c.spec as Obj).names.singular = 'gizmo'; }, field: 'spec.names.singular', reason: 'FieldValueInvalid' },
  { name: 'kind required', bad: (c) => { (c.spec as Obj).names.kind = ''; }, good: () => undefined, field: 'spec.names.kind', reason: 'FieldValueRequired' },
  { name: 'kind mixed case DNS-1035', bad: (c) => { (c.spec as Obj).names.kind = 'Wid_get'; }, good: (c) => { (c.spec as Obj).names.kind = 'WidGet'; }, field: 'spec.names.kind', reason: 'FieldValueInvalid' },
  { name: 'listKind differs from kind', bad: (c) => { (c.spec as Obj).names.listKind = 'Widget'; }, good: () => undefined, field: 'spec.names.listKind', reason: 'FieldValueInvalid' },
  { name: 'shortNames DNS-1035', bad: (c) => { (c.spec as Obj).names.shortNames = ['wd', 'W!']; }, good: (c) => { (c.spec as Obj).names.shortNames = ['wd']; }, field: 'spec.names.shortNames[1]', reason: 'FieldValueInvalid' },
  { name: 'categories DNS-1035', bad: (c) => { (c.spec as Obj).names.categories = ['all', 'My Stuff']; }, good: (c) => { (c.spec as Obj).names.categories = ['all']; }, field: 'spec.names.categories[1]', reason: 'FieldValueInvalid' },
  { name: 'exactly one storage version', bad: (c) => { (c.spec as Obj).versions.push({ ...version(c), name: 'v2' }); }, good: (c) => { (c.spec as Obj).versions.push({ ...version(c), name: 'v2', storage: false }); }, field: 'spec.versions', reason: 'FieldValueInvalid' },
  { name: 'at least one version', bad: (c) => { (c.spec as Obj).versions = []; }, good: () => undefined, field: 'spec.versions', reason: 'FieldValueInvalid' },
  { name: 'unique version names', bad: (c) => { (c.spec as Obj).versions.push({ ...version(c), storage: false }); }, good: (c) => { (c.spec as Obj).versions.push({ ...version(c), name: 'v1beta1', storage: false }); }, field: 'spec.versions', reason: 'FieldValueInvalid' },
  { name: 'version name format', bad: (c) => { version(c).name = 'V1'; }, good: (c) => { version(c).name = 'v1alpha1'; }, field: 'spec.versions[0].name', reason: 'FieldValueInvalid' },
  { name: 'openAPIV3Schema required', bad: (c) => { delete version(c).schema; }, good: () => undefined, field: 'spec.versions[0].schema.openAPIV3Schema', reason: 'FieldValueRequired' },
  { name: 'no defaults while preserveUnknownFields', bad: (c) => { (c.spec as Obj).preserveUnknownFields = true; specProps(c).name.default = 'a'; }, good: () => undefined, field: 'spec.preserveUnknownFields', reason: 'FieldValueInvalid' },
  { name: 'conversion None while preserveUnknownFields', bad: (c) => { (c.spec as Obj).preserveUnknownFields = true; (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://h/c' } } }; }, good: () => undefined, field: 'spec.conversion.strategy', reason: 'FieldValueInvalid' },
  { name: 'preserveUnknownFields true refused', bad: (c) => { (c.spec as Obj).preserveUnknownFields = true; }, good: (c) => { (c.spec as Obj).preserveUnknownFields = false; }, field: 'spec.preserveUnknownFields', reason: 'FieldValueInvalid' },
  { name: 'type at the root', bad: (c) => { delete root(c).type; }, good: () => undefined, field: `${ROOT}.type`, reason: 'FieldValueRequired' },
  { name: 'object at the root', bad: (c) => { version(c).schema.openAPIV3Schema = { type: 'string' }; }, good: () => undefined, field: `${ROOT}.type`, reason: 'FieldValueInvalid' },
  { name: 'type of fields', bad: (c) => { specProps(c).x = { description: 'untyped' }; }, good: (c) => { specProps(c).x = { 'x-svc-preserve-unknown-fields': true }; }, field: `${ROOT}.properties[spec].properties[x].type`, reason: 'FieldValueRequired' },
  { name: 'type of items', bad: (c) => { specProps(c).l = { type: 'array', items: {} }; }, good: (c) => { specProps(c).l = { type: 'array', items: { 'x-svc-int-or-string': true } }; }, field: `${ROOT}.properties[spec].properties[l].items.type`, reason: 'FieldValueRequired' },
  { name: 'items of arrays', bad: (c) => { specProps(c).l = { type: 'array' }; }, good: (c) => { specProps(c).l = { type: 'array', items: { type: 'string' } }; }, field: `${ROOT}.properties[spec].properties[l].items`, reason: 'FieldValueRequired' },
  { name: 'supported types', bad: (c) => { specProps(c).x = { type: 'date' }; }, good: (c) => { specProps(c).x = { type: 'number' }; }, field: `${ROOT}.properties[spec].properties[x].type`, reason: 'FieldValueNotSupported' },
  { name: 'no additionalProperties with properties', bad: (c) => { specProps(c).m = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }; }, good: (c) => { specProps(c).m = { type: 'object', additionalProperties: { type: 'string' } }; }, field: `${ROOT}.properties[spec].properties[m].additionalProperties`, reason: 'FieldValueForbidden' },
  { name: 'no additionalProperties at the root', bad: (c) => { root(c).additionalProperties = { type: 'string' }; delete root(c).properties; }, good: () => undefined, field: `${ROOT}.additionalProperties`, reason: 'FieldValueForbidden' },
  { name: 'value validations without type', bad: (c) => { specProps(c).x = { type: 'string', anyOf: [{ type: 'string', maxLength: 3 }] }; }, good: (c) => { specProps(c).x = { type: 'string', anyOf: [{ maxLength: 3 }, { pattern: '^a' }] }; }, field: `${ROOT}.properties[spec].properties[x].anyOf[0].type`, reason: 'FieldValueForbidden' },
  { name: 'value validations without nullable', bad: (c) => { specProps(c).x = { type: 'string', allOf: [{ nullable: true }] }; }, good: (c) => { specProps(c).x = { type: 'string', nullable: true }; }, field: `${ROOT}.properties[spec].properties[x].allOf[0].nullable`, reason: 'FieldValueForbidden' },
  { name: 'value validations name declared fields', bad: (c) => { root(c).anyOf = [{ properties: { other: { minProperties: 1 } } }]; }, good: (c) => { root(c).anyOf = [{ properties: { spec: { minProperties: 1 } } }]; }, field: `${ROOT}.properties[other]`, reason: 'FieldValueRequired' },
  { name: 'int-or-string with preserve-unknown-fields', bad: (c) => { specProps(c).x = { 'x-svc-int-or-string': true, 'x-svc-preserve-unknown-fields': true }; }, good: (c) => { specProps(c).x = { 'x-svc-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }; }, field: `${ROOT}.properties[spec].properties[x].x-svc-preserve-unknown-fields`, reason: 'FieldValueInvalid' },
  { name: 'embedded resource is an object', bad: (c) => { specProps(c).t = { type: 'string', 'x-svc-embedded-resource': true }; }, good: (c) => { specProps(c).t = { type: 'object', 'x-svc-embedded-resource': true, 'x-svc-preserve-unknown-fields': true }; }, field: `${ROOT}.properties[spec].properties[t].type`, reason: 'FieldValueInvalid' },
  { name: 'embedded resource has properties', bad: (c) => { specProps(c).t = { type: 'object', 'x-svc-embedded-resource': true }; }, good: (c) => { specProps(c).t = { type: 'object', 'x-svc-embedded-resource': true, properties: { spec: { type: 'object' } } }; }, field: `${ROOT}.properties[spec].properties[t].properties`, reason: 'FieldValueRequired' },
  { name: 'preserve-unknown-fields is true', bad: (c) => { specProps(c).x = { type: 'object', 'x-svc-preserve-unknown-fields': false }; }, good: (c) => { specProps(c).x = { type: 'object', 'x-svc-preserve-unknown-fields': true }; }, field: `${ROOT}.properties[spec].properties[x].x-svc-preserve-unknown-fields`, reason: 'FieldValueInvalid' },
  { name: 'list-type on arrays', bad: (c) => { specProps(c).x = { type: 'string', 'x-svc-list-type': 'set' }; }, good: (c) => { specProps(c).x = { type: 'array', items: { type: 'string' }, 'x-svc-list-type': 'set' }; }, field: `${ROOT}.properties[spec].properties[x].type`, reason: 'FieldValueInvalid' },
  { name: 'list-type supported', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'string' }, 'x-svc-list-type': 'bag' }; }, good: (c) => { specProps(c).x = { type: 'array', items: { type: 'string' }, 'x-svc-list-type': 'atomic' }; }, field: `${ROOT}.properties[spec].properties[x].x-svc-list-type`, reason: 'FieldValueNotSupported' },
  { name: 'list-map-keys with list-type map', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] }, 'x-svc-list-type': 'map' }; }, good: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] }, 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['k'] }; }, field: `${ROOT}.properties[spec].properties[x].x-svc-list-map-keys`, reason: 'FieldValueRequired' },
  { name: 'list-map-keys name item properties', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] }, 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['id'] }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].x-svc-list-map-keys`, reason: 'FieldValueInvalid' },
  { name: 'list-map-keys required or defaulted', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } }, 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['k'] }; }, good: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string', default: 'a' } } }, 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['k'] }; }, field: `${ROOT}.properties[spec].properties[x].items.properties[k].default`, reason: 'FieldValueRequired' },
  { name: 'list-map-keys without list-type', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } }, 'x-svc-list-map-keys': ['k'] }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].x-svc-list-type`, reason: 'FieldValueRequired' },
  { name: 'map-type on objects', bad: (c) => { specProps(c).x = { type: 'string', 'x-svc-map-type': 'atomic' }; }, good: (c) => { specProps(c).x = { type: 'object', 'x-svc-map-type': 'atomic', additionalProperties: { type: 'string' } }; }, field: `${ROOT}.properties[spec].properties[x].type`, reason: 'FieldValueInvalid' },
  { name: 'map-type supported', bad: (c) => { specProps(c).x = { type: 'object', 'x-svc-map-type': 'nested', additionalProperties: { type: 'string' } }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].x-svc-map-type`, reason: 'FieldValueNotSupported' },
  { name: 'set items of objects atomic', bad: (c) => { specProps(c).x = { type: 'array', 'x-svc-list-type': 'set', items: { type: 'object', properties: { a: { type: 'string' } } } }; }, good: (c) => { specProps(c).x = { type: 'array', 'x-svc-list-type': 'set', items: { type: 'object', 'x-svc-map-type': 'atomic', properties: { a: { type: 'string' } } } }; }, field: `${ROOT}.properties[spec].properties[x].items.x-svc-map-type`, reason: 'FieldValueInvalid' },
  { name: 'metadata limited to name and generateName', bad: (c) => { root(c).properties.metadata = { type: 'object', properties: { labels: { type: 'object' } } }; }, good: (c) => { root(c).properties.metadata = { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } }; }, field: `${ROOT}.properties[metadata]`, reason: 'FieldValueForbidden' },
  { name: 'no uniqueItems', bad: (c) => { specProps(c).x = { type: 'array', items: { type: 'string' }, uniqueItems: true }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].uniqueItems`, reason: 'FieldValueForbidden' },
  { name: 'no $ref', bad: (c) => { specProps(c).x = { type: 'object', $ref: '#/definitions/x' }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].$ref`, reason: 'FieldValueForbidden' },
  { name: 'no type null', bad: (c) => { specProps(c).x = { type: 'null' }; }, good: () => undefined, field: `${ROOT}.properties[spec].properties[x].type`, reason: 'FieldValueForbidden' },
  { name: 'not nullable at the root', bad: (c) => { root(c).nullable = true; }, good: () => undefined, field: `${ROOT}.nullable`, reason: 'FieldValueForbidden' },
  { name: 'pattern compiles', bad: (c) => { specProps(c).name.pattern = '(['; }, good: (c) => { specProps(c).name.pattern = '^[a-z]+$'; }, field: `${ROOT}.properties[spec].properties[name].pattern`, reason: 'FieldValueInvalid' },
  { name: 'default of the right type', bad: (c) => { specProps(c).replicas.default = 'three'; }, good: (c) => { specProps(c).replicas.default = 3; }, field: `${ROOT}.properties[spec].properties[replicas].default`, reason: 'FieldValueTypeInvalid' },
  { name: 'default within bounds', bad: (c) => { specProps(c).replicas = { type: 'integer', minimum: 1, default: 0 }; }, good: (c) => { specProps(c).replicas = { type: 'integer', minimum: 1, default: 1 }; }, field: `${ROOT}.properties[spec].properties[replicas].default`, reason: 'FieldValueInvalid' },
  { name: 'default pruned', bad: (c) => { root(c).properties.spec.default = { replicas: 1, extra: true }; }, good: (c) => { root(c).properties.spec.default = { replicas: 1 }; }, field: `${ROOT}.properties[spec].default`, reason: 'FieldValueInvalid' },
  { name: 'no default in top-level metadata', bad: (c) => { root(c).properties.metadata = { type: 'object', default: { name: 'x' } }; }, good: () => undefined, field: `${ROOT}.properties[metadata].default`, reason: 'FieldValueForbidden' },
  { name: 'status subresource: root fields limited', bad: (c) => { version(c).subresources = { status: {} }; root(c).anyOf = [{ required: ['spec'] }]; }, good: (c) => { version(c).subresources = { status: {} }; }, field: 'spec.validation.openAPIV3Schema', reason: 'FieldValueInvalid' },
  { name: 'rule compiles', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas >' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas > 0' }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].rule`, reason: 'FieldValueInvalid' },
  { name: 'rule is typed against the schema', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.missing > 0' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: "self.name == 'x'" }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].rule`, reason: 'FieldValueInvalid' },
  { name: 'rule is a bool', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas' }]; }, good: () => undefined, field: `${ROOT}.properties[spec].x-svc-validations[0].rule`, reason: 'FieldValueInvalid' },
  { name: 'out-of-range int literal', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas < 9223372036854775808' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas > -9223372036854775808' }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].rule`, reason: 'FieldValueInvalid' },
  { name: 'rule not empty', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: ' ' }]; }, good: () => undefined, field: `${ROOT}.properties[spec].x-svc-validations[0].rule`, reason: 'FieldValueRequired' },
  { name: 'rule reason supported', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', reason: 'FieldValueBad' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', reason: 'FieldValueForbidden' }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].reason`, reason: 'FieldValueNotSupported' },
  { name: 'rule fieldPath valid', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', fieldPath: '.nope' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', fieldPath: '.replicas' }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].fieldPath`, reason: 'FieldValueInvalid' },
  { name: 'rule message without line breaks', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', message: 'a\nb' }]; }, good: () => undefined, field: `${ROOT}.properties[spec].x-svc-validations[0].message`, reason: 'FieldValueInvalid' },
  { name: 'messageExpression is a string', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', messageExpression: 'self.replicas' }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'true', messageExpression: "'n=' + string(self.replicas)" }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].messageExpression`, reason: 'FieldValueInvalid' },
  { name: 'optionalOldSelf only with oldSelf', bad: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'self.replicas > 0', optionalOldSelf: true }]; }, good: (c) => { root(c).properties.spec['x-svc-validations'] = [{ rule: 'oldSelf.hasValue()', optionalOldSelf: true }]; }, field: `${ROOT}.properties[spec].x-svc-validations[0].optionalOldSelf`, reason: 'FieldValueInvalid' },
  { name: 'oldSelf only where old values correlate', bad: (c) => { specProps(c).l = { type: 'array', items: { type: 'string', 'x-svc-validations': [{ rule: 'self == oldSelf' }] } }; }, good: (c) => { specProps(c).l = { type: 'array', 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['k'], items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } }, 'x-svc-validations': [{ rule: 'self == oldSelf' }] } }; }, field: `${ROOT}.properties[spec].properties[l].items.x-svc-validations[0].rule`, reason: 'FieldValueInvalid' },
  { name: 'estimated rule cost within the limit', bad: (c) => { specProps(c).l = { type: 'array', items: { type: 'string' }, 'x-svc-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] }; }, good: (c) => { specProps(c).l = { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 }, 'x-svc-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] }; }, field: `${ROOT}.properties[spec].properties[l].x-svc-validations[0].rule`, reason: 'FieldValueForbidden' },
  { name: 'printer column type', bad: (c) => { version(c).additionalPrinterColumns = [{ name: 'R', type: 'float', jsonPath: '.spec.replicas' }]; }, good: (c) => { version(c).additionalPrinterColumns = [{ name: 'R', type: 'integer', jsonPath: '.spec.replicas' }]; }, field: 'spec.additionalPrinterColumns[0].type', reason: 'FieldValueInvalid' },
  { name: 'printer column name', bad: (c) => { version(c).additionalPrinterColumns = [{ type: 'integer', jsonPath: '.spec.replicas' }]; }, good: () => undefined, field: 'spec.additionalPrinterColumns[0].name', reason: 'FieldValueRequired' },
  { name: 'printer column format', bad: (c) => { version(c).additionalPrinterColumns = [{ name: 'R', type: 'integer', format: 'uint', jsonPath: '.spec.replicas' }]; }, good: (c) => { version(c).additionalPrinterColumns = [{ name: 'R', type: 'integer', format: 'int32', jsonPath: '.spec.replicas' }]; }, field: 'spec.additionalPrinterColumns[0].format', reason: 'FieldValueInvalid' },
  { name: 'printer column jsonPath', bad: (c) => { version(c).additionalPrinterColumns = [{ name: 'R', type: 'integer', jsonPath: 'spec.replicas' }]; }, good: () => undefined, field: 'spec.additionalPrinterColumns[0].JSONPath', reason: 'FieldValueInvalid' },
  { name: 'selectable field exists', bad: (c) => { version(c).selectableFields = [{ jsonPath: '.spec.nope' }]; }, good: (c) => { version(c).selectableFields = [{ jsonPath: '.spec.name' }]; }, field: 'spec.selectableFields[0].jsonPath', reason: 'FieldValueInvalid' },
  { name: 'selectable field is a scalar', bad: (c) => { version(c).selectableFields = [{ jsonPath: '.spec' }]; }, good: (c) => { version(c).selectableFields = [{ jsonPath: '.spec.replicas' }]; }, field: 'spec.selectableFields[0].jsonPath', reason: 'FieldValueInvalid' },
  { name: 'selectable fields unique', bad: (c) => { version(c).selectableFields = [{ jsonPath: '.spec.name' }, { jsonPath: '.spec.name' }]; }, good: () => undefined, field: 'spec.selectableFields[1].jsonPath', reason: 'FieldValueDuplicate' },
  { name: 'at most 8 selectable fields', bad: (c) => { for (let i = 0; i < 9; i++) specProps(c)[`f${i}`] = { type: 'string' }; version(c).selectableFields = Array.from({ length: 9 }, (_, i) => ({ jsonPath: `.spec.f${i}` })); }, good: (c) => { for (let i = 0; i < 8; i++) specProps(c)[`f${i}`] = { type: 'string' }; version(c).selectableFields = Array.from({ length: 8 }, (_, i) => ({ jsonPath: `.spec.f${i}` })); }, field: 'spec.selectableFields', reason: 'FieldValueTooMany' },
  { name: 'scale specReplicasPath under .spec', bad: (c) => { version(c).subresources = { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } }; }, good: (c) => { version(c).subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } }; }, field: 'spec.subresources.scale.specReplicasPath', reason: 'FieldValueInvalid' },
  { name: 'scale statusReplicasPath required', bad: (c) => { version(c).subresources = { scale: { specReplicasPath: '.spec.replicas' } }; }, good: () => undefined, field: 'spec.subresources.scale.statusReplicasPath', reason: 'FieldValueRequired' },
  { name: 'scale statusReplicasPath under .status', bad: (c) => { version(c).subresources = { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.spec.replicas' } }; }, good: () => undefined, field: 'spec.subresources.scale.statusReplicasPath', reason: 'FieldValueInvalid' },
  { name: 'scale labelSelectorPath under .spec or .status', bad: (c) => { version(c).subresources = { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.metadata.labels' } }; }, good: () => undefined, field: 'spec.subresources.scale.labelSelectorPath', reason: 'FieldValueInvalid' },
  { name: 'scale paths of integer fields', bad: (c) => { version(c).subresources = { scale: { specReplicasPath: '.spec.name', statusReplicasPath: '.status.replicas' } }; }, good: () => undefined, field: 'spec.subresources.scale.specReplicasPath', reason: 'FieldValueInvalid' },
  { name: 'conversion strategy supported', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'Magic' }; }, good: () => undefined, field: 'spec.conversion.strategy', reason: 'FieldValueNotSupported' },
  { name: 'webhook conversion needs a client config', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } }; }, good: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://conv.example.com/convert' } } }; }, field: 'spec.conversion.webhookClientConfig', reason: 'FieldValueRequired' },
  { name: 'webhook client config: exactly one of url or service', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://a.example.com', service: { name: 's', namespace: 'n' } } } }; }, good: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 's', namespace: 'n' } } } }; }, field: 'spec.conversion.webhookClientConfig', reason: 'FieldValueRequired' },
  { name: 'webhook conversionReviewVersions required', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com' } } }; }, good: () => undefined, field: 'spec.conversion.conversionReviewVersions', reason: 'FieldValueRequired' },
  { name: 'webhook conversionReviewVersions has v1 or v1beta1', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2'], clientConfig: { url: 'https://a.example.com' } } }; }, good: (c) => { (c.spec as Obj).conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2', 'v1beta1'], clientConfig: { url: 'https://a.example.com' } } }; }, field: 'spec.conversion.conversionReviewVersions', reason: 'FieldValueInvalid' },
  { name: 'webhook config only with Webhook', bad: (c) => { (c.spec as Obj).conversion = { strategy: 'None', webhook: { clientConfig: { url: 'https://a.example.com' } } }; }, good: () => undefined, field: 'spec.conversion.webhookClientConfig', reason: 'FieldValueForbidden' },
  { name: 'protected groups carry the approval annotation', bad: (c) => { (c.spec as Obj).group = group('widgets'); c.metadata!.name = `widgets.${group('widgets')}`; }, good: (c) => { (c.spec as Obj).group = group('widgets'); c.metadata!.name = `widgets.${group('widgets')}`; c.metadata!.annotations = { [API_APPROVED_ANNOTATION.upstream]: 'https://github.com/kubernetes/enhancements/pull/1111' }; }, field: `metadata.annotations[${API_APPROVED_ANNOTATION.own}]`, reason: 'FieldValueRequired' },
  { name: 'approval annotation is a URL or unapproved', bad: (c) => { (c.spec as Obj).group = `x.${UPSTREAM_DOMAIN}`; c.metadata!.name = `widgets.x.${UPSTREAM_DOMAIN}`; c.metadata!.annotations = { [API_APPROVED_ANNOTATION.own]: 'yes' }; }, good: (c) => { (c.spec as Obj).group = `x.${UPSTREAM_DOMAIN}`; c.metadata!.name = `widgets.x.${UPSTREAM_DOMAIN}`; c.metadata!.annotations = { [API_APPROVED_ANNOTATION.own]: 'unapproved, experimental' }; }, field: `metadata.annotations[${API_APPROVED_ANNOTATION.own}]`, reason: 'FieldValueInvalid' },
  { name: 'deprecationWarning only when deprecated', bad: (c) => { version(c).deprecationWarning = 'old'; }, good: (c) => { version(c).deprecated = true; version(c).deprecationWarning = 'old'; }, field: 'spec.versions[0].deprecationWarning', reason: 'FieldValueInvalid' },
];

describe('CRD validation', () => {
  it('accepts the valid control CRD', () => {
    expect(validateCustomResourceDefinition(crd())).to.deep.equal([]);
  });

  for (const c of cases) {
    it(c.name, () => {
      const bad = crd();
      c.bad(bad);
      expect(fields(validateCustomResourceDefinition(bad)), 'failing case').to.include(`${c.field} ${c.reason}`);
      const good = crd();
      c.good(good);
      expect(validateCustomResourceDefinition(good), 'passing control').to.deep.equal([]);
    });
  }

  it('checks each version at its own path when the schemas differ', () => {
    const c = crd();
    (c.spec as Obj).versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { x: {} } } } } } });
    expect(fields(validateCustomResourceDefinition(c))).to.include('spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[x].type FieldValueRequired');
  });

  it('words structural and rule causes as the platform does', () => {
    const c = crd();
    specProps(c).x = {};
    expect(validateCustomResourceDefinition(c)[0].message).to.equal('Required value: must not be empty for specified object fields');
    const r = crd();
    root(r).properties.spec['x-svc-validations'] = [{ rule: 'self.missing > 0' }];
    expect(validateCustomResourceDefinition(r)[0].message).to.match(/^Invalid value: .*: compilation failed: ERROR: <input>:1:\d+: undefined field 'missing'/);
  });

  it('refuses a schema whose rules together exceed the per-CRD estimated cost', () => {
    const c = crd();
    for (let i = 0; i < 20; i++) {
      specProps(c)[`l${i}`] = { type: 'array', maxItems: 3000, items: { type: 'string', maxLength: 100 }, 'x-svc-validations': [{ rule: 'self.all(x, self.exists(y, x == y))' }] };
    }
    const causes = validateCustomResourceDefinition(c);
    expect(fields(causes)).to.include(`${ROOT} FieldValueForbidden`);
    expect(causes.find((x) => x.field === ROOT)!.message).to.contain('x-svc-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget');
  });

  it('estimates rules over map keys as the platform does (keys count as empty strings)', () => {
    const c = crd();
    specProps(c).annotations = {
      type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 4096 },
      'x-svc-validations': [
        { rule: "self.all(key, key.matches(r'''^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$'''))" },
        { rule: "self.all(key, key.split('/')[0].size() < 253)" },
      ],
    };
    expect(validateCustomResourceDefinition(c)).to.deep.equal([]);
  });

  it('compiles schema patterns as RE2, worded as the platform words them', () => {
    const c = crd();
    specProps(c).name.pattern = '+';
    expect(validateCustomResourceDefinition(c)).to.deep.equal([{
      reason: 'FieldValueInvalid', field: `${ROOT}.properties[spec].properties[name].pattern`,
      message: 'Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: missing argument to repetition operator: `+`',
    }]);
    specProps(c).name.pattern = '^(?=a)';
    expect(fields(validateCustomResourceDefinition(c)), 'lookahead is not RE2').to.deep.equal([`${ROOT}.properties[spec].properties[name].pattern FieldValueInvalid`]);
    specProps(c).name.pattern = '(?i)^[[:alpha:]]+\\z';
    expect(validateCustomResourceDefinition(c)).to.deep.equal([]);
  });

  it('accepts rules with RE2 inline flags anywhere in a pattern', () => {
    const c = crd();
    specProps(c).name['x-svc-validations'] = [{ rule: "self.matches(r'''^(?i)\\.?[a-z_][a-z_0-9]*$''')" }];
    expect(validateCustomResourceDefinition(c)).to.deep.equal([]);
  });

  it('lets an update keep a stored schema whose rules exceed the per-rule estimated cost', () => {
    // Some 14 million: over the per-rule limit, under the schema's total.
    const costly = (c: ApiObject) => { specProps(c).l = { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 100 }, 'x-svc-validations': [] }; };
    const limit = (c: ApiObject) => { specProps(c).l['x-svc-validations'] = [{ rule: 'self.all(x, self.all(y, x == y))' }]; };
    const old = crd();
    costly(old);
    limit(old);
    const next = structuredClone(old);
    (next.spec as Obj).names.shortNames = ['wd'];
    expect(fields(validateCustomResourceDefinition(next))).to.include(`${ROOT}.properties[spec].properties[l].x-svc-validations[0].rule FieldValueForbidden`);
    expect(validateCustomResourceDefinition(next, old)).to.deep.equal([]);
  });

  it('keeps group and plural, and once Established scope and kind, on update', () => {
    const old = crd();
    old.status = { conditions: [{ type: 'Established', status: 'True' }] };
    const next = crd({ scope: 'Cluster' });
    (next.spec as Obj).names.kind = 'Gadget';
    (next.spec as Obj).names.listKind = 'GadgetList';
    expect(fields(validateCustomResourceDefinition(next, old))).to.include.members(['spec.scope FieldValueInvalid', 'spec.names.kind FieldValueInvalid']);
    delete old.status;
    expect(validateCustomResourceDefinition(next, old)).to.deep.equal([]);
  });

  it('refuses a schema nested deeper than its walks may recurse, with one cause', () => {
    const c = crd();
    let deep: Obj = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'array', items: { type: 'object', allOf: [{ properties: { a: deep } }] } };
    specProps(c).deep = deep;
    expect(fields(validateCustomResourceDefinition(c))).to.deep.equal(['spec.versions[0].schema.openAPIV3Schema FieldValueInvalid']);
    // Defaulting (which renames extensions) leaves it to validation rather than overflowing the stack.
    builtinRegistry().lookup(group('apiextensions'), 'v1', 'customresourcedefinitions')!.prepareForCreate!(c);
  });

  it('words a deprecation warning\'s faults as the platform does, counting UTF-8 bytes', () => {
    const c = crd();
    version(c).deprecated = true;
    version(c).deprecationWarning = 'h\u00e9llo\tthere';
    expect(validateCustomResourceDefinition(c)).to.deep.equal([{
      reason: 'FieldValueInvalid', field: 'spec.versions[0].deprecationWarning',
      message: 'Invalid value: "h\u00e9llo\\tthere": must only contain printable UTF-8 characters; non-printable character found at index 6',
    }]);
    version(c).deprecationWarning = '\u00e9'.repeat(129);
    expect(validateCustomResourceDefinition(c)[0].message).to.match(/must be <= 256 characters long$/);
    version(c).deprecationWarning = '\u00e9'.repeat(128);
    expect(validateCustomResourceDefinition(c)).to.deep.equal([]);
  });

  it('words selectable fields without a schema as the platform does', () => {
    const c = crd();
    delete version(c).schema;
    version(c).selectableFields = [{ jsonPath: '.spec.name' }];
    expect(validateCustomResourceDefinition(c)).to.deep.include({
      reason: 'FieldValueInvalid', field: 'spec.selectableFields',
      message: 'Invalid value: "": selectableFields may only be set when validations.schema is included',
    });
  });

  it('keeps preserveUnknownFields already stored, and reads a property named default as no default', () => {
    const old = crd({ preserveUnknownFields: true });
    const next = crd({ preserveUnknownFields: true });
    specProps(next).default = { type: 'string' };
    expect(validateCustomResourceDefinition(next, old)).to.deep.equal([]);
  });

  it('keeps a stored version in spec.versions', () => {
    const old = crd();
    const next = crd();
    version(next).name = 'v2';
    next.status = { storedVersions: ['v1', 'v2'] };
    expect(fields(validateCustomResourceDefinition(next, old))).to.include('status.storedVersions[0] FieldValueInvalid');
  });
});

describe('CRD kind: defaults and upstream extension spellings', () => {
  const def = builtinRegistry().lookup(group('apiextensions'), 'v1', 'customresourcedefinitions')!;

  it('stores x-kubernetes-* extensions as x-svc-* and validates them', () => {
    const c = crd();
    specProps(c).tags = { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' };
    root(c).properties.spec['x-kubernetes-validations'] = [{ rule: 'self.replicas >= 0' }];
    def.prepareForCreate!(c);
    expect(specProps(c).tags).to.deep.equal({ type: 'array', items: { type: 'string' }, 'x-svc-list-type': 'set' });
    expect(root(c).properties.spec['x-svc-validations']).to.deep.equal([{ rule: 'self.replicas >= 0' }]);
    expect(def.validate!(c)).to.deep.equal([]);
    const bad = crd();
    specProps(bad).tags = { type: 'string', 'x-kubernetes-list-type': 'set' };
    def.prepareForCreate!(bad);
    expect(fields(def.validate!(bad))).to.include(`${ROOT}.properties[spec].properties[tags].type FieldValueInvalid`);
  });

  it('defaults singular, listKind, the conversion strategy and the webhook port', () => {
    const c = crd({ conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 's', namespace: 'n' } } } } });
    delete (c.spec as Obj).names.singular;
    delete (c.spec as Obj).names.listKind;
    def.prepareForCreate!(c);
    expect((c.spec as Obj).names).to.include({ singular: 'widget', listKind: 'WidgetList' });
    expect((c.spec as Obj).conversion.webhook.clientConfig.service.port).to.equal(443);
  });
});
