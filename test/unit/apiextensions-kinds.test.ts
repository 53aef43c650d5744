// A CRD as the kinds the registry serves, and the registry taking and dropping them at run time.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { kindsFor, servingState } from '../../internal/apiextensions/kinds.js';
import { builtinRegistry } from '../../internal/registry/index.js';

const schema = (defaults = false) => ({
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', ...(defaults ? { default: 1 } : {}) } } } } },
});

function crd(opts: { established?: boolean; defaults?: boolean; storedVersions?: string[] } = {}): ApiObject {
  return {
    metadata: { name: 'things.x.example.com' },
    spec: {
      group: 'x.example.com', scope: 'Cluster', names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList', shortNames: ['th'] },
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema(opts.defaults), selectableFields: [{ jsonPath: '.spec.n' }], subresources: { status: {} } },
        { name: 'v1alpha1', served: true, storage: false, schema: schema(opts.defaults) },
        { name: 'v0', served: false, storage: false, schema: schema() },
      ],
    },
    status: {
      storedVersions: opts.storedVersions ?? ['v1'],
      conditions: opts.established === false ? [] : [{ type: 'Established', status: 'True' }],
    },
  };
}

describe('apiextensions: the kinds of a CRD', () => {
  it('one kind per served version, none until Established', () => {
    expect(kindsFor(crd({ established: false }))).to.deep.equal([]);
    const kinds = kindsFor(crd());
    expect(kinds.map((k) => k.version)).to.deep.equal(['v1', 'v1alpha1']);
    expect(kinds[0]).to.deep.include({ group: 'x.example.com', resource: 'things', kind: 'Thing', namespaced: false, shortNames: ['th'], statusSubresource: true, custom: true });
    expect(kinds[0].selectableFields!['spec.n']({ spec: { n: 3 } })).to.equal('3');
  });

  it('None conversion: another version reads the stored object under its apiVersion; the storage version reads as stored when it can', () => {
    const [v1, alpha] = kindsFor(crd());
    expect(v1.fromStorage).to.equal(undefined);
    expect(v1.toStorage).to.equal(undefined);
    expect(alpha.fromStorage!({ apiVersion: 'x.example.com/v1', spec: {} }).apiVersion).to.equal('x.example.com/v1alpha1');
    expect(alpha.toStorage!({ apiVersion: 'x.example.com/v1alpha1' }).apiVersion).to.equal('x.example.com/v1');
    const [withDefaults] = kindsFor(crd({ defaults: true }));
    expect(withDefaults.fromStorage!({ apiVersion: 'x.example.com/v1', spec: {} }).spec).to.deep.equal({ n: 1 });
    const [mixed] = kindsFor(crd({ storedVersions: ['v1alpha1', 'v1'] }));
    expect(mixed.fromStorage!({ apiVersion: 'x.example.com/v1alpha1', spec: {} }).apiVersion).to.equal('x.example.com/v1');
  });

  it('generation counts spec changes only when status has its own endpoint', () => {
    const [v1, alpha] = kindsFor(crd());
    const old = { apiVersion: 'x.example.com/v1', kind: 'Thing', metadata: { name: 'a', generation: 1 }, spec: { n: 1 }, status: { s: 1 } };
    const statusOnly = structuredClone({ ...old, status: { s: 2 } });
    v1.prepareForUpdate!(statusOnly, old);
    expect(statusOnly.metadata.generation).to.equal(1);
    expect(statusOnly.status).to.deep.equal({ s: 1 });
    const noStatusEndpoint = structuredClone({ ...old, status: { s: 2 } });
    alpha.prepareForUpdate!(noStatusEndpoint, old);
    expect(noStatusEndpoint.metadata.generation).to.equal(2);
  });

  it('serving state ignores what the kinds do not depend on', () => {
    const a = crd();
    const b = crd();
    (b.status as any).conditions[0].lastTransitionTime = '2026-01-01T00:00:00Z';
    expect(servingState(a)).to.equal(servingState(b));
    (b.spec as any).versions[1].served = false;
    expect(servingState(a)).to.not.equal(servingState(b));
  });

  it('the registry serves, lists and drops custom kinds, and says when they change', () => {
    const registry = builtinRegistry();
    let changes = 0;
    registry.onChange(() => changes++);
    registry.define('things.x.example.com', kindsFor(crd()));
    expect(changes).to.equal(1);
    expect(registry.lookup('x.example.com', 'v1', 'things')?.kind).to.equal('Thing');
    expect(registry.lookupKind('x.example.com', 'v1alpha1', 'Thing')?.resource).to.equal('things');
    expect(registry.groups().get('x.example.com')).to.deep.equal(['v1', 'v1alpha1']);
    expect([...registry.groups().keys()].pop()).to.equal('x.example.com');
    registry.define('things.x.example.com', []);
    expect(changes).to.equal(2);
    expect(registry.lookup('x.example.com', 'v1', 'things')).to.equal(undefined);
    expect(registry.groups().has('x.example.com')).to.equal(false);
    registry.define('things.x.example.com', []);
    expect(changes).to.equal(2);
  });
});
