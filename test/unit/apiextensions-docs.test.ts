// What a CustomResourceDefinition version publishes besides its objects: printer
// columns (kubectl JSONPath, cell types, the default Age column), the OpenAPI
// definitions and paths of its kinds, and the merge markers server-side apply reads.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { cellFor, compilePath, firstValue, printerColumns, toJsonPathPlus } from '../../internal/apiextensions/columns.js';
import {
  LIST_META_REF, OBJECT_META_REF, customDefinitions, customKindNames, definitionName, publishedSchema, toOpenAPIV2, versionSchema,
} from '../../internal/apiextensions/openapi.js';
import { extension } from '../../internal/names/index.js';
import { apply, typeOf } from '../../internal/patch/index.js';
import { Registry, builtinRegistry, type KindDef } from '../../internal/registry/index.js';
import type { Schema } from '../../internal/registry/openapi.js';
import { openapiV2, openapiV3Document } from '../../gateway/openapi.js';

const GROUP = 'stable.example.com';
const X = (name: string) => extension(name);

const widgetSchema = (): Schema => ({
  type: 'object',
  description: 'A widget.',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
    spec: {
      type: 'object',
      description: 'What the widget should be.',
      required: ['size'],
      example: { size: 1 },
      properties: {
        size: { type: 'integer', minimum: 1, description: 'How big.' },
        port: { [X('int-or-string')]: true },
        note: { type: 'string', nullable: true },
        tags: { type: 'array', items: { type: 'string' }, [X('list-type')]: 'set' },
        ports: {
          type: 'array', [X('list-type')]: 'map', [X('list-map-keys')]: ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        plain: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' }, [X('map-type')]: 'atomic' },
        extra: { type: 'object', [X('preserve-unknown-fields')]: true, properties: { known: { type: 'string' } } },
        template: { type: 'object', [X('embedded-resource')]: true, properties: { spec: { type: 'object' } } },
      },
      [X('validations')]: [{ rule: 'self.size < 100', message: 'too big' }],
    },
  },
});

const crd = (schema: Schema = widgetSchema(), extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: `apiextensions.${GROUP}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP, scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetCollection' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...extra }],
  },
});

const names = customKindNames(crd(), 'v1');
const published = () => publishedSchema(names, versionSchema(crd(), 'v1'));
const spec = (s: Schema) => s.properties!.spec;

describe('apiextensions: printer columns', () => {
  const obj: ApiObject = {
    apiVersion: `${GROUP}/v1`, kind: 'Widget',
    metadata: { name: 'w1', creationTimestamp: new Date(Date.now() - 3 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), labels: { 'app.svc.io/name': 'x' } },
    spec: { size: 3, ratio: 1.5, on: true, tags: ['a', 'b'], nested: { b: 1, a: '<x>' } },
    status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] },
  };

  it('puts Name first and the default Age column (type date) when a version declares none', () => {
    const cols = printerColumns({ name: 'v1' });
    expect(cols.map((c) => [c.name, c.type, c.format ?? ''])).to.deep.equal([['Name', 'string', 'name'], ['Age', 'date', '']]);
    expect(cols.map((c) => c.cell(obj))).to.deep.equal(['w1', '3h']);
  });

  it('evaluates each jsonPath as kubectl does and types the cell', () => {
    const cols = printerColumns({
      additionalPrinterColumns: [
        { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'The size.' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Ratio', type: 'number', jsonPath: '.spec.ratio', priority: 1 },
        { name: 'On', type: 'boolean', jsonPath: '.spec.on', format: 'flag' },
        { name: 'Tags', type: 'string', jsonPath: '.spec.tags' },
        { name: 'FirstTag', type: 'string', jsonPath: '.spec.tags[*]' },
        { name: 'Nested', type: 'string', jsonPath: '.spec.nested' },
        { name: 'App', type: 'string', jsonPath: '.metadata.labels.app\\.svc\\.io/name' },
        { name: 'Missing', type: 'string', jsonPath: '.spec.nothing' },
        { name: 'Mismatch', type: 'integer', jsonPath: '.status.conditions[0].type' },
        { name: 'Created', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    });
    expect(cols.map((c) => c.name)).to.deep.equal(['Name', 'Size', 'Ready', 'Ratio', 'On', 'Tags', 'FirstTag', 'Nested', 'App', 'Missing', 'Mismatch', 'Created']);
    expect(cols.map((c) => c.cell(obj))).to.deep.equal(['w1', 3, 'True', 1.5, true, '["a","b"]', 'a', '{"a":"\\u003cx\\u003e","b":1}', 'x', null, null, '3h']);
    expect(cols[1].description).to.equal('The size.');
    expect(cols[2].description).to.equal('Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status');
    expect([cols[1].priority ?? 0, cols[3].priority]).to.deep.equal([0, 1]);
    expect(cols[4].format).to.equal('flag');
  });

  it('renders cells of each type as the platform does', () => {
    expect([cellFor('integer', 2.7), cellFor('integer', '2'), cellFor('number', 2), cellFor('boolean', 'true')]).to.deep.equal([2, null, 2, null]);
    expect([cellFor('date', 'yesterday'), cellFor('date', 5), cellFor('string', false), cellFor('string', null)]).to.deep.equal(['<invalid>', null, 'false', null]);
    expect(cellFor('date', '2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:45Z'))).to.equal('45s');
  });

  it('reads kubectl paths: filters, indexes, slices, recursion, escaped dots', () => {
    expect(toJsonPathPlus('.a.b\\.c[0]')).to.equal("$.a['b.c'][0]");
    expect(toJsonPathPlus('..name')).to.equal('$..name');
    const doc = { items: [{ name: 'p', v: 1 }, { name: 'q', v: 2 }] };
    expect(firstValue(doc, toJsonPathPlus('.items[-1:].name'))).to.equal('q');
    expect(firstValue(doc, toJsonPathPlus('.items[?(@.v>1)].name'))).to.equal('q');
    expect(firstValue(doc, toJsonPathPlus('..name'))).to.equal('p');
    expect(firstValue(doc, toJsonPathPlus('.items[?(@.name=="a]b")].v'))).to.equal(undefined);
    // Plain names and indexes are walked directly, to the same values.
    for (const path of ['.items[1].name', '.items[0]', '.items', '.items[2].name', '.items.length', '.nothing.deeper']) {
      expect(compilePath(path)(doc), path).to.deep.equal(path.endsWith('.length') ? undefined : firstValue(doc, toJsonPathPlus(path)));
    }
  });
});

describe('apiextensions: published OpenAPI', () => {
  it('names definitions with the group reversed', () => {
    expect(definitionName(GROUP, 'v1', 'Widget')).to.equal('com.example.stable.v1.Widget');
  });

  it('publishes the structural schema with ObjectMeta, TypeMeta, the group-version-kind and the value validations', () => {
    const s = published();
    expect(s[X('group-version-kind')]).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Widget' }]);
    expect(s.properties!.metadata).to.deep.include({ $ref: OBJECT_META_REF });
    expect(s.properties!.apiVersion).to.include({ type: 'string' });
    expect(s.properties!.kind.description).to.be.a('string');
    expect(s.description).to.equal('A widget.');
    expect(spec(s)).to.deep.include({ description: 'What the widget should be.', required: ['size'] });
    expect(spec(s)).to.not.have.property('example');
    expect(spec(s).properties!.size).to.deep.equal({ type: 'integer', minimum: 1, description: 'How big.' });
    expect(spec(s)[X('validations')]).to.deep.equal([{ rule: 'self.size < 100', message: 'too big' }]);
    expect(spec(s).properties!.port).to.deep.equal({ [X('int-or-string')]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
    const template = spec(s).properties!.template;
    expect(template.required).to.deep.equal(['kind', 'apiVersion']);
    expect(Object.keys(template.properties!).sort()).to.deep.equal(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(publishedSchema(names, s)).to.deep.equal(s);
    const upstreamSpelled = publishedSchema(names, { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } } });
    expect(upstreamSpelled.properties!.tags).to.deep.equal({ type: 'array', items: { type: 'string' }, [X('list-type')]: 'set' });
  });

  it('publishes the list kind under its listKind', () => {
    const defs = customDefinitions(names, published(), false);
    const list = defs['com.example.stable.v1.WidgetCollection'];
    expect(list[X('group-version-kind')]).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'WidgetCollection' }]);
    expect(list.properties!.items.items).to.deep.equal({ $ref: '#/definitions/com.example.stable.v1.Widget' });
    expect(list.properties!.metadata).to.deep.include({ $ref: LIST_META_REF });
    expect(list.required).to.deep.equal(['items']);
  });

  it('drops for Swagger 2.0 what kubectl cannot read there', () => {
    const v2 = toOpenAPIV2(published());
    const specV2 = spec(v2);
    expect(specV2.properties!.port).to.deep.equal({ [X('int-or-string')]: true });
    expect(specV2.properties!.note).to.deep.equal({});
    expect(specV2.properties!.extra).to.deep.equal({ [X('preserve-unknown-fields')]: true });
    expect(specV2.properties!.size).to.deep.equal({ type: 'integer', minimum: 1, description: 'How big.' });
    const open = toOpenAPIV2(publishedSchema(names, { type: 'object', [X('preserve-unknown-fields')]: true }));
    expect(open).to.deep.equal({ type: 'object', [X('group-version-kind')]: [{ group: GROUP, version: 'v1', kind: 'Widget' }] });
  });
});

/** A custom kind as the registry serves it: its schema is the published one. */
function customKindDef(subresources: string[] = ['status', 'scale']): KindDef {
  const schema = published();
  return {
    group: GROUP, version: 'v1', resource: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetCollection',
    namespaced: true, verbs: ['get', 'list', 'create', 'update', 'patch', 'delete', 'deletecollection', 'watch'],
    subresources, custom: true, schema: () => schema,
  };
}

describe('apiextensions: custom kinds in the OpenAPI documents', () => {
  const registry = new Registry([...builtinRegistry().all(), customKindDef()]);

  it('adds the definitions and every path to /openapi/v2, with both spellings of the markers', () => {
    const doc = openapiV2(registry, true) as { definitions: Record<string, Schema>; paths: Record<string, Record<string, any>> };
    const widget = doc.definitions['com.example.stable.v1.Widget'];
    expect(widget['x-kubernetes-group-version-kind']).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Widget' }]);
    expect(widget[X('group-version-kind')]).to.deep.equal(widget['x-kubernetes-group-version-kind']);
    expect(spec(widget).properties!.tags['x-kubernetes-list-type']).to.equal('set');
    expect(doc.definitions['com.example.stable.v1.WidgetCollection']).to.not.equal(undefined);
    const base = `/apis/${GROUP}/v1`;
    const collection = `${base}/namespaces/{namespace}/widgets`;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith(base)).sort()).to.deep.equal(
      [`${base}/widgets`, collection, `${collection}/{name}`, `${collection}/{name}/scale`, `${collection}/{name}/status`].sort());
    expect(Object.keys(doc.paths[collection]).sort()).to.deep.equal(['delete', 'get', 'parameters', 'post']);
    expect(Object.keys(doc.paths[`${collection}/{name}`]).sort()).to.deep.equal(['delete', 'get', 'parameters', 'patch', 'put']);
    const patch = doc.paths[`${collection}/{name}`].patch;
    expect(patch.consumes).to.not.include('application/strategic-merge-patch+json');
    expect(patch.consumes).to.include('application/apply-patch+yaml');
    expect(patch.operationId).to.equal('patchNamespacedWidget');
    expect(patch['x-kubernetes-action']).to.equal('patch');
    expect(patch['x-kubernetes-group-version-kind']).to.deep.equal({ group: GROUP, version: 'v1', kind: 'Widget' });
    expect(doc.paths[`${base}/widgets`].get.operationId).to.equal('listWidgetForAllNamespaces');
    expect([doc.paths[collection].post.description, doc.paths[collection].delete.description, patch.description,
      doc.paths[`${collection}/{name}/status`].put.description]).to.deep.equal(
      ['create a Widget', 'delete collection of Widget', 'partially update the specified Widget', 'replace status of the specified Widget']);
    expect(doc.paths[`${collection}/{name}/scale`].get.responses[200].schema.$ref).to.match(/\.api\.autoscaling\.v1\.Scale$/);
    expect(doc.paths[collection].get.responses[200].schema.$ref).to.equal('#/definitions/com.example.stable.v1.WidgetCollection');
  });

  it('serves the group version in /openapi/v3 with the definitions it refers to', () => {
    const doc = openapiV3Document(registry, GROUP, 'v1') as any;
    const schemas = doc.components.schemas as Record<string, Schema>;
    expect(Object.keys(schemas)).to.include.members(['com.example.stable.v1.Widget', 'com.example.stable.v1.WidgetCollection']);
    expect(schemas['com.example.stable.v1.Widget'].properties!.metadata.$ref).to.equal(OBJECT_META_REF.replace('#/definitions/', '#/components/schemas/'));
    for (const ref of ['ObjectMeta', 'ListMeta', 'ManagedFieldsEntry', 'Status', 'DeleteOptions', 'Patch']) {
      expect(Object.keys(schemas).some((n) => n.endsWith(`.meta.v1.${ref}`)), ref).to.equal(true);
    }
    expect(spec(schemas['com.example.stable.v1.Widget']).properties!.port.anyOf).to.have.length(2);
    const patch = doc.paths[`/apis/${GROUP}/v1/namespaces/{namespace}/widgets/{name}`].patch;
    expect(Object.keys(patch.requestBody.content)).to.not.include('application/strategic-merge-patch+json');
    expect(patch.parameters.find((p: any) => p.name === 'force').schema).to.deep.equal({ type: 'boolean' });
  });
});

describe('apiextensions: server-side apply by the schema markers', () => {
  const type = typeOf(published());
  const opts = (manager: string, force = false) => ({ type, apiVersion: `${GROUP}/v1`, kind: 'Widget', manager, force });
  const widget = (s: Record<string, unknown>): ApiObject => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: s });
  const specOf = (o: ApiObject) => o.spec as Record<string, unknown>;

  it('merges the items of a map list and a set by key, owned by each applier', () => {
    let obj = apply({}, widget({ size: 1, ports: [{ name: 'a', port: 1 }], tags: ['x'] }), opts('one'));
    obj = apply(obj, widget({ ports: [{ name: 'b', port: 2 }], tags: ['y'] }), opts('two'));
    expect(specOf(obj).ports).to.deep.equal([{ name: 'a', port: 1 }, { name: 'b', port: 2 }]);
    expect(specOf(obj).tags).to.deep.equal(['x', 'y']);
    const two = (obj.metadata!.managedFields as any[]).find((e) => e.manager === 'two').fieldsV1;
    expect(JSON.stringify(two)).to.contain('k:{\\"name\\":\\"b\\"}').and.contain('v:\\"y\\"');
  });

  it('replaces lists without markers and atomic maps whole, and conflicts on them', () => {
    let obj = apply({}, widget({ plain: [{ name: 'a' }], labels: { a: '1' } }), opts('one'));
    const err = (() => { try { apply(obj, widget({ plain: [{ name: 'b' }] }), opts('two')); } catch (e) { return e; } return undefined; })();
    expect(err).to.be.instanceOf(StatusError);
    expect((err as StatusError).code).to.equal(409);
    expect((err as StatusError).message).to.contain('.spec.plain');
    obj = apply(obj, widget({ plain: [{ name: 'b' }], labels: { b: '2' } }), opts('two', true));
    expect(specOf(obj)).to.deep.include({ plain: [{ name: 'b' }], labels: { b: '2' } });
  });

  it('follows a marker change: map to atomic gives the list to its items\' owners, atomic to map conflicts no more', () => {
    const withPorts = (listType: string) => {
      const s = widgetSchema();
      const ports = s.properties!.spec.properties!.ports;
      ports[X('list-type')] = listType;
      if (listType !== 'map') delete ports[X('list-map-keys')];
      return typeOf(publishedSchema(names, s));
    };
    const as = (manager: string, t: ReturnType<typeof typeOf>) => ({ type: t, apiVersion: `${GROUP}/v1`, kind: 'Widget', manager, force: false });
    let obj = apply({}, widget({ ports: [{ name: 'a', port: 1 }] }), as('one', withPorts('map')));
    obj = apply(obj, widget({ ports: [{ name: 'b', port: 2 }] }), as('two', withPorts('map')));
    const err = (() => { try { apply(obj, widget({ ports: [{ name: 'c', port: 3 }] }), as('three', withPorts('atomic'))); } catch (e) { return e; } return undefined; })();
    expect((err as StatusError).details?.causes?.map((c) => [c.message, c.field])).to.deep.equal(
      [['conflict with "one"', '.spec.ports'], ['conflict with "two"', '.spec.ports']]);
    const atomic = apply({}, widget({ ports: [{ name: 'a', port: 1 }] }), as('one', withPorts('atomic')));
    expect(specOf(apply(atomic, widget({ ports: [{ name: 'b', port: 2 }] }), as('two', withPorts('map')))).ports).to.have.length(2);
  });

  it('keeps metadata typed as ObjectMeta: finalizers merge as a set', () => {
    const fin = (f: string[]): ApiObject => ({ ...widget({}), metadata: { name: 'w', namespace: 'ns', finalizers: f } });
    let obj = apply({}, fin(['a']), opts('one'));
    obj = apply(obj, fin(['b']), opts('two'));
    expect(obj.metadata!.finalizers).to.deep.equal(['a', 'b']);
  });
});
