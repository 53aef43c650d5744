import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { FieldSet, UNTYPED, apply, managerName, recordUpdate, rootType, type TypeNode } from '../../internal/patch/index.js';
import { additions, compare } from '../../internal/patch/fieldmanager/typed.js';

const cmType = rootType({ group: '', version: 'v1', kind: 'ConfigMap' })!;
const deployType = rootType({ group: 'apps', version: 'v1', kind: 'Deployment' })!;

type Entry = { manager: string; operation: string; apiVersion: string; time?: string; fieldsV1: Record<string, unknown>; subresource?: string };
const entries = (obj: ApiObject) => (obj.metadata?.managedFields ?? []) as Entry[];
const entry = (obj: ApiObject, manager: string, operation = 'Apply') => entries(obj).find((e) => e.manager === manager && e.operation === operation);
const fields = (obj: ApiObject, manager: string, operation = 'Apply') => entry(obj, manager, operation)?.fieldsV1;

const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}): ApiObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', ...extra }, data });

const cmOpts = (manager: string, force = false) => ({ type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager, force });
const deployOpts = (manager: string, force = false) => ({ type: deployType, apiVersion: 'apps/v1', kind: 'Deployment', manager, force });

/** A Deployment configuration with the given pod spec. */
const deployment = (podSpec: Record<string, unknown>, labels?: Record<string, string>): ApiObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', ...(labels ? { labels } : {}) },
  spec: { template: { spec: podSpec } },
});
const podSpec = (obj: ApiObject) => ((obj.spec as any).template.spec);

function conflictOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(StatusError);
    expect((err as StatusError).code, (err as Error).message).to.equal(409);
    return err as StatusError;
  }
  throw new Error('expected a conflict');
}

/** Creates through a non-apply write, as a POST records it. */
const created = (obj: ApiObject, manager = 'creator', type: TypeNode = cmType, apiVersion = 'v1') =>
  recordUpdate(undefined, structuredClone(obj), { type, apiVersion, kind: String(obj.kind), manager });

describe('field ownership', () => {
  describe('FieldsV1', () => {
    it('round-trips fields, keys, values and "." in FieldsV1 order', () => {
      const json = {
        'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:x': {} } },
        'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } },
      };
      const set = FieldSet.fromFieldsV1(json);
      expect(set.toFieldsV1()).to.deep.equal(json);
      expect(JSON.stringify(FieldSet.fromFieldsV1({ 'f:b': {}, 'f:a': {} }).toFieldsV1())).to.equal('{"f:a":{},"f:b":{}}');
    });

    it('records list items by key (with key defaults), set items by value, atomic lists whole and never by index', () => {
      const obj = created(deployment({
        containers: [{ name: 'app', image: 'i', args: ['a', 'b'], ports: [{ containerPort: 80 }] }],
        tolerations: [{ key: 'k' }],
      }), 'creator', deployType, 'apps/v1');
      const f = JSON.stringify(fields(obj, 'creator', 'Update'));
      expect(f).to.contain('"k:{\\"name\\":\\"app\\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports"');
      expect(f).to.contain('"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}');
      expect(f).to.contain('"f:tolerations":{}');
      expect(f).not.to.contain('"i:');
      const withFinalizers = created({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['a.example/x'] } });
      expect(fields(withFinalizers, 'creator', 'Update')).to.deep.equal({ 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a.example/x"': {} } } });
    });

    it('records the fields of a new object as comparing it against an empty object would', () => {
      const objects: Array<[unknown, TypeNode]> = [
        [cm({ a: '1', b: '' }, { labels: { x: 'y' }, annotations: {}, finalizers: ['f', 'f', 'g'] }), cmType],
        [deployment({
          containers: [{ name: 'app', image: 'i', args: ['a', 'b'], ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP' }], env: [] },
            { name: 'app', image: 'duplicate' }, { image: 'nameless' }],
          tolerations: [{ key: 'k' }], volumes: [{ name: 'v', emptyDir: {} }], nodeSelector: { a: 'b' }, hostname: null,
        }, { app: 'a' }), deployType],
        [{ apiVersion: 'v1', kind: 'Thing', spec: { list: [{ a: 1 }, [2], 3], map: { m: { n: {} } }, empty: [] }, metadata: 'odd' }, UNTYPED],
        [{ apiVersion: 'v1', kind: 'ConfigMap', data: 'not a map', metadata: { labels: ['not', 'a', 'map'] } }, cmType],
        [{}, cmType],
      ];
      for (const [obj, type] of objects) {
        expect(additions(obj, type).toFieldsV1(), JSON.stringify(obj)).to.deep.equal(compare({}, obj, type).added.toFieldsV1());
      }
    });
  });

  describe('non-apply writes', () => {
    it('derive the manager from the User-Agent when no fieldManager is given', () => {
      expect(managerName(null, 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef')).to.equal('kubectl');
      expect(managerName('mine', 'kubectl/v1.33.0')).to.equal('mine');
      expect(managerName(undefined, 'a'.repeat(200))).to.have.length(128);
    });

    it('record what a create sets, without type information or server-set metadata', () => {
      const obj = created(cm({ k: 'v' }, { labels: { app: 'x' }, uid: 'u', resourceVersion: '5' }));
      expect(entries(obj)).to.have.length(1);
      expect(entry(obj, 'creator', 'Update')).to.include({ operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' });
      expect(entry(obj, 'creator', 'Update')!.time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(fields(obj, 'creator', 'Update')).to.deep.equal({ 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } });
    });

    it('merge into one entry per manager and apiVersion, and move changed fields from other managers without conflict', () => {
      let obj = created(cm({ a: '1', b: '1' }));
      obj = recordUpdate(obj, cm({ a: '2', b: '1' }, { managedFields: obj.metadata!.managedFields }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'editor' });
      obj = recordUpdate(obj, cm({ a: '2', b: '1', c: '3' }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'editor' });
      expect(fields(obj, 'creator', 'Update')).to.deep.equal({ 'f:data': { '.': {}, 'f:b': {} } });
      expect(fields(obj, 'editor', 'Update')).to.deep.equal({ 'f:data': { 'f:a': {}, 'f:c': {} } });
      const other = recordUpdate(obj, cm({ a: '2', b: '1', c: '3', d: '4' }), { type: cmType, apiVersion: 'v2', kind: 'ConfigMap', manager: 'editor' });
      expect(entries(other).filter((e) => e.manager === 'editor').map((e) => e.apiVersion)).to.deep.equal(['v1', 'v2']);
    });

    it('drop removed fields from every manager', () => {
      const obj = recordUpdate(created(cm({ a: '1', b: '1' })), cm({ a: '1' }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'editor' });
      expect(fields(obj, 'creator', 'Update')).to.deep.equal({ 'f:data': { '.': {}, 'f:a': {} } });
      expect(entry(obj, 'editor', 'Update')).to.equal(undefined);
    });

    it('leave managedFields untouched when nothing changes', () => {
      const obj = created(cm({ a: '1' }));
      const again = recordUpdate(obj, structuredClone(obj), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'other' });
      expect(again.metadata!.managedFields).to.deep.equal(obj.metadata!.managedFields);
    });

    it('clear every entry on managedFields [{}], not on []; with other changes the writer owns just those', () => {
      const obj = apply(created(cm({ a: '1' })), cm({ b: '2' }), cmOpts('applier'));
      const opts = { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'resetter' };
      expect(recordUpdate(obj, cm({ a: '1', b: '2' }, { managedFields: [{}] }), opts).metadata).not.to.have.property('managedFields');
      expect(entries(recordUpdate(obj, cm({ a: '1', b: '2' }, { managedFields: [] }), opts))).to.have.length(2);
      const changed = recordUpdate(obj, cm({ a: '1', b: '2', c: '3' }, { managedFields: [{}] }), opts);
      expect(entries(changed).map((e) => e.manager)).to.deep.equal(['resetter']);
      expect(fields(changed, 'resetter', 'Update')).to.deep.equal({ 'f:data': { 'f:c': {} } });
    });

    it('take managedFields a write sets when they are valid, and keep the recorded ones otherwise', () => {
      const obj = created(cm({ a: '1' }));
      const opts = { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'writer' };
      const mine = [{ manager: 'someone', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
      expect(entries(recordUpdate(obj, cm({ a: '1' }, { managedFields: mine }), opts)).map((e) => e.manager)).to.deep.equal(['someone']);
      const broken = [{ manager: 'x', operation: 'Steal', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
      expect(entries(recordUpdate(obj, cm({ a: '1' }, { managedFields: broken }), opts)).map((e) => e.manager)).to.deep.equal(['creator']);
    });

    it('leave an object written before any ownership was recorded untracked', () => {
      const obj = recordUpdate(cm({ a: '1' }), cm({ a: '2' }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'w' });
      expect(obj.metadata).not.to.have.property('managedFields');
    });

    it('merge the oldest of more than ten updaters into ancient-changes', () => {
      let obj = created(cm({ k0: '0' }), 'm0');
      const managed = obj.metadata!.managedFields as Entry[];
      managed[0].time = '2020-01-01T00:00:00Z';
      for (let i = 1; i <= 11; i++) {
        obj = recordUpdate(obj, cm({ ...(obj.data as Record<string, string>), [`k${i}`]: String(i) }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: `m${i}` });
      }
      const names = entries(obj).map((e) => e.manager);
      expect(names).to.have.length(10);
      expect(names).to.include('ancient-changes');
      expect(fields(obj, 'ancient-changes', 'Update')).to.have.nested.property('f:data.f:k0');
      expect(fields(obj, 'ancient-changes', 'Update')).to.have.nested.property('f:data.f:k1');
    });

    it('never record fields the write may not own', () => {
      const ignored = FieldSet.of([{ field: 'status' }]);
      const obj = recordUpdate(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { a: 'b' } }, status: { phase: 'Active' } },
        { type: rootType({ group: '', version: 'v1', kind: 'Namespace' })!, apiVersion: 'v1', kind: 'Namespace', manager: 'w', ignored });
      expect(fields(obj, 'w', 'Update')).to.deep.equal({ 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
    });
  });

  describe('apply', () => {
    it('creates from an empty object with one Apply entry', () => {
      const obj = apply({}, cm({ a: '1' }, { labels: { l: 'x' } }), cmOpts('applier'));
      expect(obj.data).to.deep.equal({ a: '1' });
      expect(entries(obj).map((e) => [e.manager, e.operation, e.apiVersion])).to.deep.equal([['applier', 'Apply', 'v1']]);
      expect(fields(obj, 'applier')).to.deep.equal({ 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:l': {} } } });
    });

    it('rejects managedFields in the configuration and a configuration of another type', () => {
      for (const [config, message] of [[cm({}, { managedFields: [] }), 'metadata.managedFields must be nil'],
        [{ ...cm({}), kind: 'Secret' }, 'invalid object type: /v1, Kind=Secret']] as const) {
        try {
          apply({}, config, cmOpts('a'));
          expect.fail('accepted');
        } catch (err) {
          expect((err as StatusError).code).to.equal(400);
          expect((err as Error).message).to.equal(message);
        }
      }
    });

    it('shares ownership of fields set to the same value', () => {
      let obj = apply({}, cm({ a: '1' }), cmOpts('one'));
      obj = apply(obj, cm({ a: '1', b: '2' }), cmOpts('two'));
      expect(fields(obj, 'one')).to.deep.equal({ 'f:data': { 'f:a': {} } });
      expect(fields(obj, 'two')).to.deep.equal({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    });

    it('lists every conflicting field with its manager, three managers in identity order', () => {
      let obj = apply({}, cm({ a: '1' }), cmOpts('A'));
      obj = apply(obj, cm({ b: '1' }), cmOpts('B'));
      obj = recordUpdate(obj, cm({ a: '1', b: '1', c: '1' }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'C' });
      const err = conflictOf(() => apply(obj, cm({ a: '2', b: '2', c: '2' }), cmOpts('D')));
      expect(err.reason).to.equal('Conflict');
      expect(err.message).to.equal('Apply failed with 3 conflicts: conflicts with "A":\n- .data.a\nconflicts with "B":\n- .data.b\nconflicts with "C" using v1:\n- .data.c');
      expect(err.details?.causes).to.deep.equal([
        { reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.data.a' },
        { reason: 'FieldManagerConflict', message: 'conflict with "B"', field: '.data.b' },
        { reason: 'FieldManagerConflict', message: 'conflict with "C" using v1', field: '.data.c' },
      ]);
      expect(conflictOf(() => apply(obj, cm({ a: '2' }), cmOpts('D'))).message).to.equal('Apply failed with 1 conflict: conflict with "A": .data.a');
    });

    it('with force overwrites, takes ownership and removes the fields from the other managers', () => {
      let obj = apply({}, cm({ a: '1', x: '1' }), cmOpts('A'));
      obj = apply(obj, cm({ b: '1' }), cmOpts('B'));
      obj = apply(obj, cm({ a: '2', b: '2' }), cmOpts('D', true));
      expect(obj.data).to.deep.equal({ a: '2', x: '1', b: '2' });
      expect(fields(obj, 'A')).to.deep.equal({ 'f:data': { 'f:x': {} } });
      expect(entry(obj, 'B')).to.equal(undefined);
      expect(fields(obj, 'D')).to.deep.equal({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    });

    it('resolves a conflict by dropping the field from the request: the field stays with its owner', () => {
      let obj = apply({}, cm({ a: '1' }), cmOpts('A'));
      conflictOf(() => apply(obj, cm({ a: '2', b: '2' }), cmOpts('B')));
      obj = apply(obj, cm({ b: '2' }), cmOpts('B'));
      expect(obj.data).to.deep.equal({ a: '1', b: '2' });
      expect(fields(obj, 'A')).to.deep.equal({ 'f:data': { 'f:a': {} } });
    });

    it('removes a field the applier drops when nobody else owns it, and keeps it when someone does', () => {
      let obj = apply({}, cm({ a: '1', b: '1', c: '1' }), cmOpts('A'));
      obj = apply(obj, cm({ b: '1' }), cmOpts('B'));
      obj = recordUpdate(obj, cm({ a: '1', b: '1', c: '9' }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'editor' });
      obj = apply(obj, cm({}), cmOpts('A'));
      expect(obj.data).to.deep.equal({ b: '1', c: '9' });
      expect(entry(obj, 'A')).to.equal(undefined);
      obj = apply(obj, cm({}), cmOpts('B'));
      expect(obj.data).to.deep.equal({ c: '9' });
    });

    it('changes nothing and keeps the entry times when the configuration is already in place', () => {
      const obj = apply({}, cm({ a: '1' }), cmOpts('A'));
      (obj.metadata!.managedFields as Entry[])[0].time = '2020-01-01T00:00:00Z';
      const again = apply(obj, cm({ a: '1' }), cmOpts('A'));
      expect(again).to.deep.equal(obj);
    });

    it('changes nothing when the configuration adds only empty metadata maps, which are not stored', () => {
      const obj = apply({}, cm({ a: '1' }), cmOpts('A'));
      (obj.metadata!.managedFields as Entry[])[0].time = '2020-01-01T00:00:00Z';
      const again = apply(obj, cm({ a: '1' }, { labels: {}, annotations: {} }), cmOpts('A'));
      expect(again.metadata!.managedFields).to.deep.equal(obj.metadata!.managedFields);
      expect(again.metadata).to.not.have.any.keys('labels', 'annotations');
    });

    it('takes the existing fields of an untracked object as before-first-apply', () => {
      const obj = apply(cm({ a: '1' }), cm({ b: '1' }), cmOpts('A'));
      expect(fields(obj, 'before-first-apply', 'Update')).to.deep.equal({ 'f:data': { '.': {}, 'f:a': {} } });
      conflictOf(() => apply(obj, cm({ a: '2' }), cmOpts('B')));
    });

    it('merges containers by name: each applier owns its own, and dropping one removes only it', () => {
      let obj = apply({}, deployment({ containers: [{ name: 'a', image: 'x' }] }), deployOpts('A'));
      obj = apply(obj, deployment({ containers: [{ name: 'b', image: 'y' }] }), deployOpts('B'));
      expect(podSpec(obj).containers).to.deep.equal([{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }]);
      const err = conflictOf(() => apply(obj, deployment({ containers: [{ name: 'a', image: 'z' }] }), deployOpts('B')));
      expect(err.message).to.equal('Apply failed with 1 conflict: conflict with "A": .spec.template.spec.containers[name="a"].image');
      obj = apply(obj, deployment({ containers: [{ name: 'a', image: 'x', args: ['run'] }, { name: 'b', image: 'y' }] }), deployOpts('B'));
      expect(podSpec(obj).containers).to.deep.equal([{ name: 'a', image: 'x', args: ['run'] }, { name: 'b', image: 'y' }]);
      expect(fields(obj, 'B')).to.have.nested.property('f:spec.f:template.f:spec.f:containers.k:{"name":"a"}.f:image');
      obj = apply(obj, deployment({}), deployOpts('A'));
      expect(podSpec(obj).containers.map((c: { name: string }) => c.name)).to.deep.equal(['a', 'b']);
      obj = apply(obj, deployment({ containers: [{ name: 'b', image: 'y' }] }), deployOpts('B'));
      expect(podSpec(obj).containers).to.deep.equal([{ name: 'b', image: 'y' }]);
    });

    it('places new list items where the configuration puts them, keeping the live order otherwise', () => {
      let obj = apply({}, deployment({ containers: [{ name: 'a' }, { name: 'b' }] }), deployOpts('A'));
      obj = apply(obj, deployment({ containers: [{ name: 'a' }, { name: 'n' }, { name: 'b' }] }), deployOpts('A'));
      expect(podSpec(obj).containers.map((c: { name: string }) => c.name)).to.deep.equal(['a', 'n', 'b']);
      obj = apply(obj, deployment({ containers: [{ name: 'z' }] }), deployOpts('B'));
      expect(podSpec(obj).containers.map((c: { name: string }) => c.name)).to.deep.equal(['a', 'n', 'b', 'z']);
    });

    it('treats set lists item by item', () => {
      let obj = apply({}, cm({}, { finalizers: ['x'] }), cmOpts('A'));
      obj = apply(obj, cm({}, { finalizers: ['y'] }), cmOpts('B'));
      expect(obj.metadata!.finalizers).to.deep.equal(['x', 'y']);
      expect(fields(obj, 'B')).to.deep.equal({ 'f:metadata': { 'f:finalizers': { 'v:"y"': {} } } });
      obj = apply(obj, cm({}), cmOpts('A'));
      expect(obj.metadata!.finalizers).to.deep.equal(['y']);
    });

    it('treats atomic lists as one field: another value conflicts, the same value is shared', () => {
      const obj = apply({}, deployment({ containers: [{ name: 'a', args: ['1', '2'] }] }), deployOpts('A'));
      const err = conflictOf(() => apply(obj, deployment({ containers: [{ name: 'a', args: ['1', '3'] }] }), deployOpts('B')));
      expect(err.details?.causes?.[0].field).to.equal('.spec.template.spec.containers[name="a"].args');
      const shared = apply(obj, deployment({ containers: [{ name: 'a', args: ['1', '2'] }] }), deployOpts('B'));
      expect(JSON.stringify(fields(shared, 'B'))).to.contain('"f:args":{}');
      const forced = apply(obj, deployment({ containers: [{ name: 'a', args: ['3'] }] }), deployOpts('B', true));
      expect(podSpec(forced).containers[0].args).to.deep.equal(['3']);
    });

    it('treats atomic maps as one field, replaced whole', () => {
      const obj = apply({}, deployment({ nodeSelector: { a: '1' } }), deployOpts('A'));
      const err = conflictOf(() => apply(obj, deployment({ nodeSelector: { b: '2' } }), deployOpts('B')));
      expect(err.details?.causes?.[0].field).to.equal('.spec.template.spec.nodeSelector');
      const forced = apply(obj, deployment({ nodeSelector: { b: '2' } }), deployOpts('B', true));
      expect(podSpec(forced).nodeSelector).to.deep.equal({ b: '2' });
      expect(entry(forced, 'A')).to.equal(undefined);
    });

    it('merges granular maps key by key', () => {
      let obj = apply({}, deployment({}, { a: '1' }), deployOpts('A'));
      obj = apply(obj, deployment({}, { b: '2' }), deployOpts('B'));
      expect(obj.metadata!.labels).to.deep.equal({ a: '1', b: '2' });
    });

    it('gives a value that became atomic to the owners of its parts', () => {
      const obj = apply({}, deployment({ nodeSelector: { a: '1' } }), deployOpts('A'));
      // As recorded while nodeSelector was granular: A owns the key, not the map.
      (obj.metadata!.managedFields as Entry[])[0].fieldsV1 = { 'f:spec': { 'f:template': { 'f:spec': { 'f:nodeSelector': { 'f:a': {} } } } } };
      const err = conflictOf(() => apply(obj, deployment({ nodeSelector: { b: '1' } }), deployOpts('B')));
      expect(err.message).to.equal('Apply failed with 1 conflict: conflict with "A": .spec.template.spec.nodeSelector');
      const kept = apply(obj, deployment({ nodeSelector: { a: '1' } }), deployOpts('A'));
      expect(fields(kept, 'A')).to.deep.equal({ 'f:spec': { 'f:template': { 'f:spec': { 'f:nodeSelector': {} } } } });
    });

    it('leaves a value that became granular owned at the top only, so edits of its parts do not conflict', () => {
      const obj = apply({}, cm({ a: '1' }), cmOpts('A'));
      // As recorded while data was atomic: A owns the whole map.
      (obj.metadata!.managedFields as Entry[])[0].fieldsV1 = { 'f:data': {} };
      const changed = apply(obj, cm({ a: '2' }), cmOpts('B'));
      expect(changed.data).to.deep.equal({ a: '2' });
      expect(fields(changed, 'A')).to.deep.equal({ 'f:data': {} });
    });

    it('never gives ownership of ignored fields', () => {
      const obj = apply({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, status: { phase: 'x' } },
        { type: rootType({ group: '', version: 'v1', kind: 'Namespace' })!, apiVersion: 'v1', kind: 'Namespace', manager: 'A', force: false, ignored: FieldSet.of([{ field: 'status' }]) });
      expect(entries(obj)).to.deep.equal([]);
    });

    it('treats kinds without a schema as untyped: maps granular, lists atomic', () => {
      const opts = { type: UNTYPED, apiVersion: 'example.com/v1', kind: 'Widget', manager: 'A', force: false };
      const obj = apply({}, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { list: [{ name: 'a' }], size: 1 } }, opts);
      expect(fields(obj, 'A')).to.deep.equal({ 'f:spec': { '.': {}, 'f:list': {}, 'f:size': {} } });
      const err = conflictOf(() => apply(obj, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { list: [{ name: 'b' }] } }, { ...opts, manager: 'B' }));
      expect(err.details?.causes?.[0].field).to.equal('.spec.list');
    });

    it('lets kubectl take over the fields its client-side apply annotation set', () => {
      const annotation = 'kubectl.kubernetes.io/last-applied-configuration';
      const lastApplied = JSON.stringify(cm({ a: '1' }));
      let obj = created(cm({ a: '1' }, { annotations: { [annotation]: lastApplied } }), 'kubectl-client-side-apply');
      obj = recordUpdate(obj, cm({ a: '1', b: '1' }, { annotations: { [annotation]: lastApplied } }), { type: cmType, apiVersion: 'v1', kind: 'ConfigMap', manager: 'editor' });
      const applied = apply(obj, cm({ a: '2' }), cmOpts('kubectl'));
      expect(applied.data).to.deep.equal({ a: '2', b: '1' });
      expect(JSON.parse(applied.metadata!.annotations![annotation])).to.deep.equal(cm({ a: '2' }));
      conflictOf(() => apply(obj, cm({ a: '2', b: '2' }), cmOpts('kubectl')));
      conflictOf(() => apply(obj, cm({ a: '2' }), cmOpts('someone-else')));
    });
  });
});
