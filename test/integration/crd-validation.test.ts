// CustomResourceDefinition validation over HTTPS: invalid CRDs are 422 Invalid
// with a cause per field; custom objects are pruned, defaulted, type-checked
// and held to their validation rules (transition rules on updates), and
// fieldValidation Strict and Warn treat pruned fields as for built-in kinds.
import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { group, upstreamExtension } from '../../internal/names/index.js';
import { crdManifest, specSchema } from '../lib/crd.js';

const CRDS = `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;
const GROUP = 'checks.example.com';
const ROOT = 'spec.validation.openAPIV3Schema';
const THINGS = `/apis/${GROUP}/v1/namespaces/default/things`;

type Obj = Record<string, any>;

/** A valid CRD of kind Thing: bounds, a default, a pattern, a preserved map, rules (one a transition rule). */
const things = (): Obj => crdManifest(GROUP, 'Thing', specSchema({
  min: { type: 'integer', default: 0 }, max: { type: 'integer', maximum: 100, default: 10 },
  mode: { type: 'string', enum: ['Fast', 'Slow'], default: 'Slow' },
  name: { type: 'string', pattern: '^[a-z]+$' },
  extra: { type: 'object', [upstreamExtension('preserve-unknown-fields')]: true },
}, upstreamExtension('validations'), [
  { rule: 'self.min <= self.max', message: 'min must not exceed max' },
  { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
], { status: { type: 'object', properties: { ready: { type: 'boolean' } } } }), { subresources: { status: {} } });

describe('CustomResourceDefinition validation and custom object schemas', function () {
  this.timeout(120_000);
  let c: Cluster;

  const causes = (res: { body: any }): string[] => (res.body?.details?.causes ?? []).map((x: any) => `${x.field} ${x.reason}`);

  async function expectInvalid(crd: Obj, expected: string[]): Promise<void> {
    const res = await c.request('POST', CRDS, { body: crd });
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(res.body.details).to.include({ name: crd.metadata.name, group: group('apiextensions'), kind: 'CustomResourceDefinition' });
    expect(causes(res)).to.include.members(expected);
  }

  before(async () => {
    c = await new Cluster().start();
  });
  after(async () => { await c?.stop(); });

  it('refuses CRDs that break the names, scope, versions and schema rules, one cause per field', async () => {
    const crd = things();
    crd.metadata.name = 'wrong.checks.example.com';
    delete crd.spec.scope;
    crd.spec.names.kind = 'Bad_Kind';
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2' });
    crd.spec.versions[1].schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { x: {} } } } } };
    await expectInvalid(crd, [
      'metadata.name FieldValueInvalid', 'spec.scope FieldValueRequired', 'spec.names.kind FieldValueInvalid', 'spec.versions FieldValueInvalid',
      'spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[x].type FieldValueRequired',
    ]);
  });

  it('refuses a schema nested too deep with one cause, not a server error', async () => {
    const crd = things();
    let deep: Obj = { type: 'string' };
    // Lists of lists: one JSON level per schema level, so the body stays within the decoder's depth limit.
    for (let i = 0; i < 300; i++) deep = { type: 'array', items: deep };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.deep = deep;
    const res = await c.request('POST', CRDS, { body: crd });
    expect(res.status, res.text.slice(0, 500)).to.equal(422);
    expect(res.body.details.causes).to.deep.equal([{
      reason: 'FieldValueInvalid', message: 'Invalid value: "": must not nest schemas more than 256 levels deep', field: 'spec.versions[0].schema.openAPIV3Schema',
    }]);
  });

  it('refuses structural violations, bad defaults, bad rules and costly rules', async () => {
    const crd = things();
    const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    props.max.default = 'ten';
    props.m = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } };
    props.l = { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'map' };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.metadata = { type: 'object', properties: { labels: { type: 'object' } } };
    await expectInvalid(crd, [
      `${ROOT}.properties[spec].properties[m].additionalProperties FieldValueForbidden`,
      `${ROOT}.properties[spec].properties[l].x-svc-list-map-keys FieldValueRequired`,
      `${ROOT}.properties[metadata] FieldValueForbidden`,
    ]);
    const rules = things();
    rules.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.nothing > 1' }];
    rules.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags =
      { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] };
    await expectInvalid(rules, [
      `${ROOT}.properties[spec].x-svc-validations[0].rule FieldValueInvalid`,
      `${ROOT}.properties[spec].properties[tags].x-svc-validations[0].rule FieldValueForbidden`,
    ]);
    const defaults = things();
    defaults.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.max.default = 'ten';
    await expectInvalid(defaults, [`${ROOT}.properties[spec].properties[max].default FieldValueTypeInvalid`]);
  });

  it('refuses bad conversion, printer columns, selectable fields, scale paths and preserveUnknownFields', async () => {
    const crd = things();
    crd.spec.preserveUnknownFields = true;
    crd.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v9'], clientConfig: { url: 'https://a.example.com', service: { name: 's', namespace: 'n' } } } };
    crd.spec.versions[0].additionalPrinterColumns = [{ name: 'Max', type: 'float', jsonPath: '.spec.max' }];
    crd.spec.versions[0].selectableFields = [{ jsonPath: '.spec.extra' }];
    crd.spec.versions[0].subresources.scale = { specReplicasPath: '.status.x', statusReplicasPath: '.status.ready' };
    await expectInvalid(crd, [
      'spec.preserveUnknownFields FieldValueInvalid', 'spec.conversion.webhookClientConfig FieldValueRequired',
      'spec.conversion.conversionReviewVersions FieldValueInvalid', 'spec.additionalPrinterColumns[0].type FieldValueInvalid',
      'spec.selectableFields[0].jsonPath FieldValueInvalid', 'spec.subresources.scale.specReplicasPath FieldValueInvalid',
    ]);
  });

  it('accepts the valid CRD, storing x-kubernetes-* extensions as x-svc-*', async () => {
    const res = await c.request('POST', CRDS, { body: things() });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-svc-validations']).to.have.length(2);
    expect(res.body.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations']).to.equal(undefined);
    expect(await waitFor(async () => (await c.request('GET', THINGS)).status === 200, 15_000, 50), 'served').to.equal(true);
  });

  const thing = (name: string, spec: Obj = {}): Obj => ({ apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name }, spec });

  it('prunes unknown fields, keeps preserved ones, applies defaults', async () => {
    const res = await c.request('POST', THINGS, { body: { ...thing('a', { min: 1, bogus: true, extra: { any: { thing: 1 } } }), junk: 1 } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.spec).to.deep.equal({ min: 1, max: 10, mode: 'Slow', extra: { any: { thing: 1 } } });
    expect(res.body).to.not.have.property('junk');
    const got = await c.request('GET', `${THINGS}/a`);
    expect(got.body.spec).to.deep.equal(res.body.spec);
  });

  it('warns about pruned fields by default and refuses them with fieldValidation=Strict', async () => {
    const warned = await c.request('POST', THINGS, { body: thing('w', { bogus: 1 }) });
    expect(warned.status, warned.text).to.equal(201);
    expect(String(warned.headers.warning)).to.contain('unknown field \\"spec.bogus\\"');
    const strict = await c.request('POST', `${THINGS}?fieldValidation=Strict`, { body: thing('s', { bogus: 1 }) });
    expect(strict.status, strict.text).to.equal(400);
    expect(strict.body.message).to.contain('unknown field "spec.bogus"');
    const ignored = await c.request('POST', `${THINGS}?fieldValidation=Ignore`, { body: thing('i', { bogus: 1 }) });
    expect(ignored.status).to.equal(201);
    expect(ignored.headers.warning).to.equal(undefined);
  });

  it('validates types, bounds, enums and patterns in the schema validator words', async () => {
    const res = await c.request('POST', THINGS, { body: thing('bad', { max: 101, mode: 'Medium', name: 'ABC', min: 'x' }) });
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.include({ reason: 'Invalid', code: 422 });
    expect(causes(res)).to.include.members(['spec.max FieldValueInvalid', 'spec.mode FieldValueNotSupported', 'spec.name FieldValueInvalid', 'spec.min FieldValueTypeInvalid']);
    const max = res.body.details.causes.find((x: any) => x.field === 'spec.max');
    expect(max.message).to.equal('Invalid value: 101: spec.max in body should be less than or equal to 100');
  });

  it('holds objects to their validation rules, listing every failing rule', async () => {
    const res = await c.request('POST', THINGS, { body: thing('r', { min: 20, max: 5 }) });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.details.causes).to.deep.include({ reason: 'FieldValueInvalid', message: 'Invalid value: "object": min must not exceed max', field: 'spec' });
    expect((await c.request('POST', THINGS, { body: thing('r', { min: 2, max: 5 }) })).status).to.equal(201);
  });

  it('runs transition rules on updates only', async () => {
    const created = await c.request('POST', THINGS, { body: thing('t', { mode: 'Fast' }) });
    expect(created.status, created.text).to.equal(201);
    const changed = await c.request('PATCH', `${THINGS}/t`, { body: { spec: { mode: 'Slow' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(changed.status, changed.text).to.equal(422);
    expect(changed.body.details.causes).to.deep.include({ reason: 'FieldValueInvalid', message: 'Invalid value: "object": mode is immutable', field: 'spec' });
    const kept = await c.request('PATCH', `${THINGS}/t`, { body: { spec: { max: 50 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(kept.status, kept.text).to.equal(200);
    expect(kept.body.spec).to.include({ mode: 'Fast', max: 50 });
  });

  it('validates status writes against the status schema', async () => {
    const got = (await c.request('GET', `${THINGS}/t`)).body;
    const bad = await c.request('PUT', `${THINGS}/t/status`, { body: { ...got, status: { ready: 'yes' } } });
    expect(bad.status, bad.text).to.equal(422);
    // The type error blocks the rules, which the platform says with a cause of its own.
    expect(causes(bad)).to.deep.equal(['status.ready FieldValueTypeInvalid', '<nil> FieldValueInvalid']);
    const ok = await c.request('PUT', `${THINGS}/t/status`, { body: { ...got, status: { ready: true } } });
    expect(ok.status, ok.text).to.equal(200);
  });
});
