import { expect } from 'chai';
import { StatusError } from '../../internal/apimachinery/status.js';
import { applyJsonPatch, mergePatch, rootType, strategicMergePatch, type TypeNode } from '../../internal/patch/index.js';

const deploymentType = rootType({ group: 'apps', version: 'v1', kind: 'Deployment' })!;
const podType = rootType({ group: '', version: 'v1', kind: 'Pod' })!;

/** Expects `fn` to throw a StatusError with `code`; answers it. */
function statusOf(fn: () => unknown, code: number): StatusError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(StatusError);
    expect((err as StatusError).code, (err as Error).message).to.equal(code);
    return err as StatusError;
  }
  throw new Error(`expected a ${code}`);
}

describe('patch formats', () => {
  describe('JSON patch (RFC 6902)', () => {
    const doc = { metadata: { name: 'a', labels: { 'app.svc/name': 'x' } }, data: { a: '1', b: '2' }, list: [1, 2, 3] };

    it('applies every operation in order without touching the input', () => {
      const out = applyJsonPatch(doc, [
        { op: 'add', path: '/data/c', value: '3' },
        { op: 'remove', path: '/data/a' },
        { op: 'replace', path: '/data/b', value: 'two' },
        { op: 'move', from: '/data/c', path: '/data/moved' },
        { op: 'copy', from: '/data/b', path: '/data/copied' },
        { op: 'test', path: '/data/copied', value: 'two' },
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'add', path: '/list/0', value: 0 },
        { op: 'remove', path: '/metadata/labels/app.svc~1name' },
      ]);
      expect(out).to.deep.equal({ metadata: { name: 'a', labels: {} }, data: { b: 'two', moved: '3', copied: 'two' }, list: [0, 1, 2, 3, 4] });
      expect(doc.data).to.deep.equal({ a: '1', b: '2' });
    });

    it('answers 422 for a failed test and changes nothing', () => {
      const err = statusOf(() => applyJsonPatch(doc, [{ op: 'replace', path: '/data/a', value: 'x' }, { op: 'test', path: '/data/b', value: 'nope' }]), 422);
      expect(err.reason).to.equal('Invalid');
      expect(err.details?.causes?.[0].message).to.contain('test operation failed');
      expect(doc.data.a).to.equal('1');
    });

    it('answers 422 for a path that does not resolve', () => {
      statusOf(() => applyJsonPatch(doc, [{ op: 'remove', path: '/data/missing' }]), 422);
      statusOf(() => applyJsonPatch(doc, [{ op: 'add', path: '/nope/deeper', value: 1 }]), 422);
      statusOf(() => applyJsonPatch(doc, [{ op: 'add', path: '/list/9', value: 1 }]), 422);
    });

    it('answers 400 for a malformed patch', () => {
      for (const bad of [{ op: 'add' }, [{ op: 'frobnicate', path: '/a' }], [{ op: 'add', path: '/a' }], [{ op: 'move', path: '/a' }], ['x'], [{ op: 'add', path: 'a', value: 1 }]]) {
        statusOf(() => applyJsonPatch(doc, bad), 400);
      }
    });

    it('answers 413 past 10000 operations', () => {
      statusOf(() => applyJsonPatch(doc, Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/data/a', value: '1' }))), 413);
    });
  });

  describe('merge patch (RFC 7386)', () => {
    // The examples of the RFC's appendix A.
    const cases: Array<[unknown, unknown, unknown]> = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, result] of cases) {
      it(`${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => expect(mergePatch(target, patch)).to.deep.equal(result));
    }
  });

  describe('strategic merge patch', () => {
    const sp = (original: Record<string, unknown>, patch: Record<string, unknown>, t: TypeNode = podType) => strategicMergePatch(original, patch, t);
    const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({ metadata: { name: 'p' }, spec: { containers, ...extra } });

    it('merges list items by their merge key and appends new ones', () => {
      const out = sp(pod([{ name: 'a', image: 'x', args: ['1', '2'] }, { name: 'b', image: 'y' }]),
        { spec: { containers: [{ name: 'a', image: 'x2' }] } });
      expect(out.spec).to.deep.equal({ containers: [{ name: 'a', image: 'x2', args: ['1', '2'] }, { name: 'b', image: 'y' }] });
    });

    it('replaces lists without a merge strategy (args) and maps by key (env by name)', () => {
      const out = sp(pod([{ name: 'a', args: ['1', '2'], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }]),
        { spec: { containers: [{ name: 'a', args: ['3'], env: [{ name: 'B', value: 'b' }] }] } });
      expect(out.spec).to.deep.equal({ containers: [{ name: 'a', args: ['3'], env: [{ name: 'A', value: '1' }, { name: 'B', value: 'b' }] }] });
    });

    it('puts new items the patch names first unless $setElementOrder orders them', () => {
      const base = pod([{ name: 'a' }, { name: 'b' }]);
      expect(sp(base, { spec: { containers: [{ name: 'c' }] } }).spec).to.deep.equal({ containers: [{ name: 'c' }, { name: 'a' }, { name: 'b' }] });
      const ordered = sp(base, { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }, { name: 'b' }], containers: [{ name: 'c' }] } });
      expect(ordered.spec).to.deep.equal({ containers: [{ name: 'a' }, { name: 'c' }, { name: 'b' }] });
      const reordered = sp(base, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } });
      expect(reordered.spec).to.deep.equal({ containers: [{ name: 'b' }, { name: 'a' }] });
    });

    it('answers 400 when the patch list disagrees with $setElementOrder', () => {
      statusOf(() => sp(pod([{ name: 'a' }]), { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'z' }] } }), 400);
    });

    it('deletes list items with $patch: delete and replaces lists with $patch: replace', () => {
      const base = pod([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
      expect(sp(base, { spec: { containers: [{ name: 'b', $patch: 'delete' }] } }).spec).to.deep.equal({ containers: [{ name: 'a' }, { name: 'c' }] });
      expect(sp(base, { spec: { containers: [{ name: 'z', image: 'i' }, { $patch: 'replace' }] } }).spec).to.deep.equal({ containers: [{ name: 'z', image: 'i' }] });
    });

    it('replaces or deletes a map with $patch', () => {
      const base = { metadata: { name: 'p', labels: { a: '1', b: '2' } } };
      expect(sp(base, { metadata: { labels: { c: '3', $patch: 'replace' } } })).to.deep.equal({ metadata: { name: 'p', labels: { c: '3' } } });
      expect(sp(base, { metadata: { labels: { $patch: 'delete' } } })).to.deep.equal({ metadata: { name: 'p', labels: {} } });
      statusOf(() => sp(base, { metadata: { labels: { $patch: 'shred' } } }), 400);
    });

    it('removes keys set to null and ignores unknown directives', () => {
      const out = sp({ metadata: { name: 'p', labels: { a: '1', b: '2' } } }, { metadata: { labels: { a: null, $unknown: 1, c: '3' } } });
      expect(out).to.deep.equal({ metadata: { name: 'p', labels: { b: '2', c: '3' } } });
    });

    it('merges primitive lists with a merge strategy as sets and deletes with $deleteFromPrimitiveList', () => {
      const base = { metadata: { name: 'p', finalizers: ['a', 'b'] } };
      expect(sp(base, { metadata: { finalizers: ['b', 'c'] } }).metadata).to.deep.equal({ name: 'p', finalizers: ['a', 'b', 'c'] });
      expect(sp(base, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }).metadata).to.deep.equal({ name: 'p', finalizers: ['b'] });
      expect(sp(base, { metadata: { '$setElementOrder/finalizers': ['b', 'a', 'c'], finalizers: ['c'] } }).metadata).to.deep.equal({ name: 'p', finalizers: ['b', 'a', 'c'] });
    });

    it('clears keys $retainKeys does not list, and rejects a patch setting an unlisted key', () => {
      const base = { metadata: { name: 'd' }, spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
      const out = sp(base, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, deploymentType);
      expect(out.spec).to.deep.equal({ strategy: { type: 'Recreate' } });
      statusOf(() => sp(base, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, maxUnavailable: 1 } } }, deploymentType), 400);
      statusOf(() => sp(base, { spec: { strategy: { $retainKeys: 'type' } } }, deploymentType), 400);
    });

    it('applies directives inside a value the original lacks', () => {
      const out = sp({ metadata: { name: 'p' } }, { spec: { containers: [{ name: 'a', $patch: 'delete' }, { name: 'b', env: [{ name: 'X', value: '1' }] }], '$setElementOrder/containers': [{ name: 'b' }] } });
      expect(out.spec).to.deep.equal({ containers: [{ name: 'b', env: [{ name: 'X', value: '1' }] }] });
    });

    it('answers 400 for an item without its merge key, 422 for lists of lists', () => {
      statusOf(() => sp(pod([{ name: 'a' }]), { spec: { containers: [{ image: 'x' }] } }), 400);
      statusOf(() => sp({ metadata: { name: 'p', finalizers: ['a'] } }, { metadata: { finalizers: [['b']] } }), 422);
    });

    it('replaces a whole value whose type changed', () => {
      expect(sp({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }] } }, { spec: { containers: { name: 'x' } } }).spec)
        .to.deep.equal({ containers: { name: 'x' } });
    });
  });
});
