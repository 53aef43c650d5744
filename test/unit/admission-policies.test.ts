import { expect } from 'chai';
import { ConstructionError, rewriteConstructions } from '../../internal/admission/policies/construction.js';
import { compileMutation, mutate } from '../../internal/admission/policies/mutating.js';
import { ExpressionError, policyBudget } from '../../internal/admission/policies/expressions.js';
import { fromJson } from '../../internal/cel/index.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import { group } from '../../internal/names/index.js';
import { ADMISSION_PLUGINS, enabledPluginNames, type PluginContext } from '../../internal/admission/index.js';

type Obj = Record<string, any>;

const deployment = (): Obj => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 1, selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } },
  },
});

/** Applies one mutation to the object, as the plugin does. */
function apply(patchType: 'ApplyConfiguration' | 'JSONPatch', expression: string, object: Obj, params: Obj | null = null): Obj {
  const member = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
  const m = compileMutation({ patchType, [member]: { expression } });
  const activation = {
    object: fromJson(object), oldObject: null, params: fromJson(params), namespaceObject: null, variables: new Map(), authorizer: null,
    request: fromJson({ operation: 'CREATE' }),
  };
  return mutate(m, object, activation, policyBudget());
}

describe('admission policies', () => {
  describe('object construction', () => {
    it('reads Object and JSONPatch constructions as map literals whose fields may differ in type', () => {
      expect(rewriteConstructions('Object{spec: Object.spec{replicas: 3}, metadata: Object.metadata{labels: {"a": "b"}}}'))
        .to.equal('{"spec": dyn({"replicas": dyn(3)}), "metadata": dyn({"labels": dyn({"a": "b"})})}');
      expect(rewriteConstructions('[JSONPatch{op: "add", path: "/x", value: 1,}]')).to.equal('[{"op": dyn("add"), "path": dyn("/x"), "value": dyn(1),}]');
    });

    it('leaves string literals and other identifiers alone, and spells out jsonpatch.escapeKey', () => {
      expect(rewriteConstructions("'Object{a: 1}' + object.metadata.name")).to.equal("'Object{a: 1}' + object.metadata.name");
      expect(rewriteConstructions('"/labels/" + jsonpatch.escapeKey(k)')).to.equal(`"/labels/" + ((k).replace('~', '~0').replace('/', '~1'))`);
    });

    it('refuses a construction whose type does not follow its field', () => {
      expect(() => rewriteConstructions('Object{spec: Object.spec{selector: Object.spec.wrong{}}}')).to.throw(ConstructionError, 'type mismatch');
    });
  });

  describe('mutations', () => {
    it('merges an apply configuration as server-side apply does: maps by key, list-map items by their key', () => {
      const out = apply('ApplyConfiguration', `Object{
        metadata: Object.metadata{labels: {"team": "blue"}},
        spec: Object.spec{replicas: 3, template: Object.spec.template{spec: Object.spec.template.spec{
          containers: [Object.spec.template.spec.containers{name: "b", imagePullPolicy: "Always"}]}}}}`, deployment());
      expect(out.metadata.labels).to.deep.equal({ app: 'web', team: 'blue' });
      expect(out.spec.replicas).to.equal(3);
      expect(out.spec.template.spec.containers).to.deep.equal([{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1', imagePullPolicy: 'Always' }]);
    });

    it('refuses an apply configuration that sets an atomic list', () => {
      const d = deployment();
      d.spec.template.spec.containers[0].args = ['x'];
      expect(() => apply('ApplyConfiguration', `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
        containers: [Object.spec.template.spec.containers{name: "a", args: ["y"]}]}}}}`, d))
        .to.throw(ExpressionError, 'invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[0].args');
    });

    it('applies JSON patches built from params, with escaped keys', () => {
      const out = apply('JSONPatch', `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("svc/team"), value: params.data.team},
        JSONPatch{op: "replace", path: "/spec/replicas", value: int(params.data.replicas)}]`, deployment(), { data: { team: 'red', replicas: '4' } });
      expect(out.metadata.labels).to.deep.equal({ app: 'web', 'svc/team': 'red' });
      expect(out.spec.replicas).to.equal(4);
    });

    it('a failed test operation leaves the object as it was; a patch that cannot apply is an error', () => {
      const d = deployment();
      expect(apply('JSONPatch', '[JSONPatch{op: "test", path: "/spec/replicas", value: 9}, JSONPatch{op: "remove", path: "/spec"}]', d)).to.deep.equal(d);
      expect(() => apply('JSONPatch', '[JSONPatch{op: "remove", path: "/spec/nope"}]', d)).to.throw(ExpressionError, /^JSON Patch: /);
      expect(() => apply('JSONPatch', 'object.metadata', d)).to.throw(ExpressionError, 'should evaluate to array of JSONPatch');
    });
  });

  describe('serving the kinds', () => {
    const served = (runtimeConfig: string, gate: boolean) => builtinRegistry({ runtimeConfig, features: (name) => name === 'MutatingAdmissionPolicy' && gate })
      .all().filter((d) => d.group === group('admissionregistration') && d.resource.startsWith('mutatingadmissionpolic')).map((d) => `${d.version}/${d.resource}`);

    it('the plugin is on by default and inert while its gate is off', () => {
      expect(enabledPluginNames([], [])).to.include('MutatingAdmissionPolicy');
      const registration = ADMISSION_PLUGINS.find((p) => p.name === 'MutatingAdmissionPolicy')!;
      const plugin = registration.create({ gates: () => false } as unknown as PluginContext);
      expect([plugin].flat().map((p) => [p.name, p.phase, p.handles('CREATE'), p.handles('UPDATE')])).to.deep.equal([['MutatingAdmissionPolicy', 'mutating', false, false]]);
    });

    it('serves MutatingAdmissionPolicy v1beta1 only with its gate on and its version enabled', () => {
      const v1beta1 = `${group('admissionregistration')}/v1beta1`;
      expect(served('', true)).to.deep.equal([]);
      expect(served(`${v1beta1}=true`, false)).to.deep.equal([]);
      expect(served(`${v1beta1}=true`, true)).to.have.members(['v1beta1/mutatingadmissionpolicies', 'v1beta1/mutatingadmissionpolicybindings']);
    });
  });
});
