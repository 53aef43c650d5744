// The registry as a whole: the resource table it serves, lookups, the schema
// walker, the shared update strategy, and defaults and rules of the other kinds.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { sharedDir } from '../../internal/config/shared.js';
import { group, labelKey } from '../../internal/names/index.js';
import { builtinRegistry, checkSchema, nameCauses, type KindDef } from '../../internal/registry/index.js';
import { resolve, schemaFor } from '../../internal/registry/openapi.js';

const registry = builtinRegistry();
const def = (group: string, resource: string, version = 'v1') => registry.lookup(group, version, resource)!;

function create(d: KindDef, obj: ApiObject): { obj: ApiObject; causes: StatusCause[] } {
  const o = structuredClone(obj);
  o.metadata = { uid: '0b4d7e3a-1c2f-4a5b-8c9d-0e1f2a3b4c5d', ...o.metadata };
  d.prepareForCreate!(o);
  return { obj: o, causes: d.validate!(o) };
}
const fields = (causes: StatusCause[]) => causes.map((c) => [c.field, c.reason]);

describe('registry: the served resources', () => {
  const rows = JSON.parse(readFileSync(join(sharedDir(), 'openapi/resources.json'), 'utf8')) as Array<{ group: string; version: string; resource: string; kind: string; namespaced: boolean; verbs: string[] }>;

  it('serves every stable resource of the table with its kind, scope and verbs, and no other version', () => {
    const stable = rows.filter((r) => /^v\d+$/.test(r.version) && !r.resource.includes('/'));
    expect(registry.all()).to.have.length(stable.length);
    for (const r of stable) {
      const d = registry.lookup(r.group, r.version, r.resource);
      expect(d, `${r.group}/${r.version}/${r.resource}`).to.not.equal(undefined);
      expect({ kind: d!.kind, namespaced: d!.namespaced, verbs: d!.verbs }).to.deep.equal({ kind: r.kind, namespaced: r.namespaced, verbs: r.verbs });
    }
    expect(registry.lookup(group('resource'), 'v1beta1', 'deviceclasses')).to.equal(undefined);
    expect(builtinRegistry({ runtimeConfig: `${group('resource')}/v1beta1` }).lookup(group('resource'), 'v1beta1', 'deviceclasses')).to.not.equal(undefined);
  });

  it('attaches sub-resources, flags status sub-resources and finds each schema', () => {
    for (const r of rows.filter((x) => /^v\d+$/.test(x.version) && x.resource.includes('/'))) {
      const [parent, sub] = r.resource.split('/');
      const d = def(r.group, parent, r.version);
      expect(d.subresources, r.resource).to.include(sub);
      if (sub === 'status') expect(d.statusSubresource, r.resource).to.equal(true);
    }
    expect(def('apps', 'deployments').subresourceDefs!.find((s) => s.name === 'scale')).to.deep.include({ kind: 'Scale', group: 'autoscaling', version: 'v1' });
    expect(def('', 'configmaps').statusSubresource).to.equal(false);
    for (const d of registry.all()) expect(d.schema(), `${d.group}/${d.resource}`).to.not.equal(undefined);
  });

  it('orders groups for discovery and prefers autoscaling/v2', () => {
    const groups = [...registry.groups().keys()];
    expect(groups.slice(0, 3)).to.deep.equal(['', group('apiregistration'), 'apps']);
    expect(registry.groups().get('autoscaling')).to.deep.equal(['v2', 'v1']);
    expect(registry.lookupKind('apps', 'v1', 'Deployment')!.resource).to.equal('deployments');
    expect(registry.inGroupVersion('batch', 'v1').map((d) => d.resource).sort()).to.deep.equal(['cronjobs', 'jobs']);
  });

  it('answers a delete with the deleted object for exactly the kinds the platform does', () => {
    const returning = registry.all().filter((d) => d.returnDeletedObject).map((d) => `${d.resource}.${d.group}`).sort();
    expect(returning).to.deep.equal([
      `csidrivers.${group('storage')}`, `csinodes.${group('storage')}`, 'namespaces.', 'persistentvolumeclaims.', 'persistentvolumes.',
      'pods.', 'serviceaccounts.', 'services.', `storageclasses.${group('storage')}`, `volumeattachments.${group('storage')}`,
      `volumeattributesclasses.${group('storage')}`,
    ].sort());
  });

  it('declares short names, categories and singular names kubectl relies on', () => {
    expect(def('', 'pods')).to.deep.include({ singular: 'pod', shortNames: ['po'], categories: ['all'] });
    expect(def('apps', 'deployments').shortNames).to.deep.equal(['deploy']);
    expect(def('', 'services').shortNames).to.deep.equal(['svc']);
    expect(def(group('networking'), 'networkpolicies').shortNames).to.deep.equal(['netpol']);
    expect(def(group('apiextensions'), 'customresourcedefinitions').shortNames).to.deep.equal(['crd', 'crds']);
    expect(def('batch', 'jobs').categories).to.deep.equal(['all']);
  });

  it('applies each kind\'s name rule', () => {
    expect(nameCauses(def(group('rbac.authorization'), 'clusterroles'), 'system:controller:job-controller')).to.deep.equal([]);
    expect(fields(nameCauses(def('', 'services'), '1web'))).to.deep.equal([['metadata.name', 'FieldValueInvalid']]);
    expect(fields(nameCauses(def('', 'namespaces'), 'a.b'))).to.deep.equal([['metadata.name', 'FieldValueInvalid']]);
    expect(nameCauses(def('', 'configmaps'), 'a.b')).to.deep.equal([]);
  });
});

describe('registry: schema walker', () => {
  const deployment = schemaFor({ group: 'apps', version: 'v1', kind: 'Deployment' })!;
  const base = () => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
  });

  it('accepts a well-typed object and changes nothing', () => {
    const o = base();
    expect(checkSchema(o, deployment)).to.deep.equal({ causes: [], unknownFields: [] });
    expect(o).to.deep.equal(base());
  });

  it('reports type errors per field', () => {
    const o: any = base();
    o.spec.replicas = 'three';
    o.spec.paused = 'yes';
    o.spec.template.spec.containers[0].ports = [{ containerPort: 1.5 }];
    o.metadata.labels = { app: 7 };
    expect(checkSchema(o, deployment).causes).to.deep.equal([
      { reason: 'FieldValueTypeInvalid', field: 'metadata.labels[app]', message: 'Invalid value: "integer": metadata.labels[app] in body must be of type string: "integer"' },
      { reason: 'FieldValueTypeInvalid', field: 'spec.template.spec.containers[0].ports[0].containerPort', message: 'Invalid value: "number": spec.template.spec.containers[0].ports[0].containerPort in body must be of type integer: "number"' },
      { reason: 'FieldValueTypeInvalid', field: 'spec.replicas', message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"' },
      { reason: 'FieldValueTypeInvalid', field: 'spec.paused', message: 'Invalid value: "string": spec.paused in body must be of type boolean: "string"' },
    ]);
  });

  it('reports missing required fields', () => {
    const o: any = base();
    delete o.spec.template.spec.containers[0].name;
    delete o.spec.selector;
    expect(fields(checkSchema(o, deployment).causes)).to.deep.equal([
      ['spec.template.spec.containers[0].name', 'FieldValueRequired'], ['spec.selector', 'FieldValueRequired'],
    ]);
  });

  it('lists unknown fields and drops them (unless asked not to)', () => {
    const o: any = base();
    o.spec.replica = 3;
    o.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
    o.status = { bogus: true };
    const kept = structuredClone(o);
    expect(checkSchema(kept, deployment, { prune: false }).unknownFields).to.have.length(3);
    expect(kept.spec.replica).to.equal(3);
    expect(checkSchema(o, deployment).unknownFields).to.deep.equal(['.spec.template.spec.containers[0].imagePullPolicyy', '.spec.replica', '.status.bogus']);
    expect(o.spec).to.not.have.property('replica');
    expect(o.status).to.deep.equal({});
  });

  it('writes times as the platform does (Time to the second, MicroTime to the microsecond, UTC); leaves bad ones to be reported', () => {
    const lease = schemaFor({ group: group('coordination'), version: 'v1', kind: 'Lease' })!;
    const o: any = {
      metadata: { name: 'l', creationTimestamp: '2026-11-23T19:14:33.999Z' },
      spec: { acquireTime: '2026-11-23T19:14:33Z', renewTime: '2026-11-23T21:14:33.1234567+02:00' },
    };
    expect(checkSchema(o, lease).causes).to.deep.equal([]);
    expect(o.metadata.creationTimestamp).to.equal('2026-11-23T19:14:33Z');
    expect(o.spec).to.deep.equal({ acquireTime: '2026-11-23T19:14:33.000000Z', renewTime: '2026-11-23T19:14:33.123456Z' });
    const bad: any = { metadata: { name: 'l' }, spec: { acquireTime: 'yesterday' } };
    expect(fields(checkSchema(bad, lease).causes)).to.deep.equal([['spec.acquireTime', 'FieldValueTypeInvalid']]);
    const kept: any = { metadata: { name: 'l', creationTimestamp: '2026-11-23T19:14:33.000Z' } };
    checkSchema(kept, lease, { prune: false });
    expect(kept.metadata.creationTimestamp, 'only a pruning walk rewrites').to.equal('2026-11-23T19:14:33.000Z');
  });

  it('knows the description fields of PriorityClass and of custom resource schemas', () => {
    const pc = { value: 10, description: 'important' };
    expect(checkSchema(pc, schemaFor({ group: group('scheduling'), version: 'v1', kind: 'PriorityClass' })!).unknownFields).to.deep.equal([]);
    const crd = { spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', description: 'A widget.' } } }] } };
    expect(checkSchema(crd, schemaFor({ group: group('apiextensions'), version: 'v1', kind: 'CustomResourceDefinition' })!).unknownFields).to.deep.equal([]);
  });

  it('drops null members and fills required numbers as typed decoding does', () => {
    const o: any = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', creationTimestamp: null }, spec: { ports: [{ name: 'x', targetPort: 80 }] } };
    checkSchema(o, schemaFor({ group: '', version: 'v1', kind: 'Service' })!);
    expect(o.metadata).to.deep.equal({ name: 's' });
    expect(o.spec.ports[0].port).to.equal(0);
  });

  it('accepts ints or strings for int-or-string, numbers or strings for quantities (written back as strings)', () => {
    const o: any = base();
    o.spec.strategy = { rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } };
    o.spec.template.spec.containers[0].resources = { limits: { cpu: 0.5, memory: '128Mi' }, requests: { cpu: 1 } };
    expect(checkSchema(o, deployment).causes).to.deep.equal([]);
    expect(o.spec.template.spec.containers[0].resources).to.deep.equal({ limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '1' } });
    o.spec.strategy.rollingUpdate.maxSurge = true;
    o.spec.template.spec.containers[0].resources.limits.memory = 'lots';
    expect(fields(checkSchema(o, deployment).causes)).to.deep.equal([
      ['spec.template.spec.containers[0].resources.limits[memory]', 'FieldValueInvalid'], ['spec.strategy.rollingUpdate.maxSurge', 'FieldValueTypeInvalid'],
    ]);
  });

  it('checks byte and date-time formats, keeps free-form objects and preserve-unknown-fields', () => {
    const secret = schemaFor({ group: '', version: 'v1', kind: 'Secret' })!;
    expect(fields(checkSchema({ metadata: { creationTimestamp: 'now' }, data: { k: 'not base64!' } }, secret).causes)).to.deep.equal([
      ['metadata.creationTimestamp', 'FieldValueTypeInvalid'], ['data[k]', 'FieldValueTypeInvalid'],
    ]);
    const revision = { revision: 1, data: { anything: { goes: [1, 'two'] } } };
    expect(checkSchema(revision, schemaFor({ group: 'apps', version: 'v1', kind: 'ControllerRevision' })!)).to.deep.equal({ causes: [], unknownFields: [] });
    expect(revision.data).to.deep.equal({ anything: { goes: [1, 'two'] } });
    const props = resolve({ $ref: '#/definitions/io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps' });
    const withPreserve = { type: 'object', properties: { a: { type: 'string' } }, 'x-svc-preserve-unknown-fields': true };
    const value = { a: 'x', extra: 1 };
    expect(checkSchema(value, withPreserve)).to.deep.equal({ causes: [], unknownFields: [] });
    expect(value).to.deep.equal({ a: 'x', extra: 1 });
    expect(props.properties).to.have.property('x-svc-preserve-unknown-fields');
  });
});

describe('registry: update strategy', () => {
  const deployments = def('apps', 'deployments');
  const deployment = (): ApiObject => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
  });

  it('sets generation 1 and an empty status on create, whatever the request said', () => {
    const o = deployment();
    o.status = { replicas: 5 };
    o.metadata!.generation = 7;
    const { obj, causes } = create(deployments, o);
    expect(causes).to.deep.equal([]);
    expect(obj.metadata!.generation).to.equal(1);
    expect(obj.status).to.deep.equal({});
  });

  it('counts the generation on spec changes, not on metadata or status changes; spec writes keep the status', () => {
    const old: ApiObject = { ...create(deployments, deployment()).obj, status: { replicas: 1 } };
    const labelled = structuredClone(old);
    labelled.metadata!.labels = { tier: 'web' };
    labelled.status = { replicas: 9 };
    deployments.prepareForUpdate!(labelled, old);
    expect(labelled.metadata!.generation).to.equal(1);
    expect(labelled.status).to.deep.equal({ replicas: 1 });
    const scaled = structuredClone(labelled);
    (scaled.spec as any).replicas = 3;
    deployments.prepareForUpdate!(scaled, labelled);
    expect(scaled.metadata!.generation).to.equal(2);
  });

  it('status writes keep everything but the status', () => {
    const old = create(deployments, deployment()).obj;
    const next = structuredClone(old);
    (next.spec as any).replicas = 9;
    next.metadata!.labels = { sneaky: 'yes' };
    next.status = { replicas: 1, readyReplicas: 1 };
    deployments.prepareForStatusUpdate!(next, old);
    expect(next.spec).to.deep.equal(old.spec);
    expect(next.metadata).to.deep.equal(old.metadata);
    expect(next.status).to.deep.equal({ replicas: 1, readyReplicas: 1 });
    expect(fields(deployments.validateStatusUpdate!({ ...next, status: { replicas: 'one' } }, old))).to.deep.equal([['status.replicas', 'FieldValueTypeInvalid']]);
  });

  it('fills required status numbers of a new object with zero', () => {
    const ds = create(def('apps', 'daemonsets'), {
      metadata: { name: 'agent', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'a', image: 'agent:1' }] } } },
    });
    expect(ds.causes).to.deep.equal([]);
    expect(ds.obj.status).to.deep.equal({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  });
});

describe('registry: defaults and rules of the other kinds', () => {
  const podSpec = { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1', memory: '1Gi' } } }] };

  it('Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600', () => {
    const { obj, causes } = create(def('apps', 'deployments'), {
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } },
    });
    expect(causes).to.deep.equal([]);
    expect(obj.spec).to.deep.include({ replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } } });
  });

  it('Deployment: selector required, not empty, matching the template, immutable', () => {
    const deployments = def('apps', 'deployments');
    const spec = (selector: unknown) => ({ metadata: { name: 'web', namespace: 'default' }, spec: { selector, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } } });
    expect(fields(create(deployments, spec(undefined)).causes)).to.deep.equal([['spec.selector', 'FieldValueRequired']]);
    expect(fields(create(deployments, spec({})).causes)).to.deep.equal([['spec.selector', 'FieldValueInvalid']]);
    expect(fields(create(deployments, spec({ matchLabels: { app: 'api' } })).causes)).to.deep.equal([['spec.template.metadata.labels', 'FieldValueInvalid']]);
    const old = create(deployments, spec({ matchLabels: { app: 'web' } })).obj;
    const next = structuredClone(old);
    (next.spec as any).selector = { matchLabels: { app: 'web', v: '2' } };
    (next.spec as any).template.metadata.labels.v = '2';
    deployments.prepareForUpdate!(next, old);
    expect(fields(deployments.validate!(next, old))).to.deep.equal([['spec.selector', 'FieldValueInvalid']]);
  });

  it('Pod: container and spec defaults, Pending status with a QoS class, requests from limits', () => {
    const { obj, causes } = create(def('', 'pods'), { metadata: { name: 'web', namespace: 'default' }, spec: structuredClone(podSpec) });
    expect(causes).to.deep.equal([]);
    const spec = obj.spec as any;
    expect(spec).to.include({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler', enableServiceLinks: true });
    expect(spec.containers[0]).to.include({ imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
    expect(spec.containers[0].ports[0].protocol).to.equal('TCP');
    expect(spec.containers[0].resources.requests).to.deep.equal({ cpu: '1', memory: '1Gi' });
    expect(obj.status).to.deep.equal({ phase: 'Pending', qosClass: 'Guaranteed' });
  });

  it('Pod: containers and names required, names unique; the spec is fixed but for images', () => {
    const pods = def('', 'pods');
    expect(fields(create(pods, { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [] } }).causes)).to.deep.equal([['spec.containers', 'FieldValueRequired']]);
    const twice = { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }] } };
    expect(fields(create(pods, twice).causes)).to.deep.equal([['spec.containers[1].name', 'FieldValueDuplicate']]);
    const old = create(pods, { metadata: { name: 'p', namespace: 'default' }, spec: structuredClone(podSpec) }).obj;
    const image = structuredClone(old);
    (image.spec as any).containers[0].image = 'nginx:1.28';
    pods.prepareForUpdate!(image, old);
    expect(pods.validate!(image, old)).to.deep.equal([]);
    const moved = structuredClone(old);
    (moved.spec as any).restartPolicy = 'Never';
    pods.prepareForUpdate!(moved, old);
    expect(fields(pods.validate!(moved, old))).to.deep.equal([['spec', 'FieldValueForbidden']]);
  });

  it('Service: defaults, address families, a cluster IP kept across updates (the gateway allocates it)', () => {
    const services = def('', 'services');
    const { obj, causes } = create(services, {
      metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', clusterIP: '10.96.0.50', selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    expect(causes).to.deep.equal([]);
    const spec = obj.spec as any;
    expect(spec).to.include({ sessionAffinity: 'None', externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack' });
    expect(spec.clusterIPs).to.deep.equal(['10.96.0.50']);
    expect(spec.ipFamilies).to.deep.equal(['IPv4']);
    expect(spec.ports[0]).to.include({ protocol: 'TCP', targetPort: 80 });
    const next = structuredClone(obj);
    delete (next.spec as any).clusterIP;
    delete (next.spec as any).clusterIPs;
    services.prepareForUpdate!(next, obj);
    expect((next.spec as any).clusterIP).to.equal(spec.clusterIP);
    (next.spec as any).clusterIP = '10.96.0.99';
    (next.spec as any).clusterIPs = ['10.96.0.99'];
    expect(fields(services.validate!(next, obj))).to.deep.equal([['spec.clusterIPs[0]', 'FieldValueInvalid']]);
    const headless = create(services, { metadata: { name: 'db', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'db' } } });
    expect(headless.causes).to.deep.equal([]);
    expect((headless.obj.spec as any).clusterIPs).to.deep.equal(['None']);
  });

  it('PriorityLevelConfiguration: nominalConcurrencyShares defaults to 30 only when unspecified; 0 is kept', () => {
    const levels = def(group('flowcontrol.apiserver'), 'prioritylevelconfigurations');
    const level = (limited: Record<string, unknown>) => ({ metadata: { name: 'batch' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' }, ...limited } } });
    const unset = create(levels, level({}));
    expect(unset.causes).to.deep.equal([]);
    expect((unset.obj.spec as any).limited).to.include({ nominalConcurrencyShares: 30, lendablePercent: 0 });
    expect((create(levels, level({ nominalConcurrencyShares: 0 })).obj.spec as any).limited.nominalConcurrencyShares).to.equal(0);
    const queued = create(levels, level({ limitResponse: { type: 'Queue', queuing: {} } })).obj;
    expect((queued.spec as any).limited.limitResponse.queuing).to.deep.equal({ handSize: 8, queues: 64, queueLengthLimit: 50 });
  });

  it('HorizontalPodAutoscaler: v2 defaults and the v1 view of the stored v2 object', () => {
    const v2 = def('autoscaling', 'horizontalpodautoscalers', 'v2');
    const v1 = def('autoscaling', 'horizontalpodautoscalers', 'v1');
    const { obj, causes } = create(v2, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 } });
    expect(causes).to.deep.equal([]);
    expect((obj.spec as any).minReplicas).to.equal(1);
    expect((obj.spec as any).metrics).to.deep.equal([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    expect(v1.storageVersion).to.equal('v2');
    const asV1 = v1.fromStorage!(obj);
    expect(asV1.apiVersion).to.equal('autoscaling/v1');
    expect((asV1.spec as any).targetCPUUtilizationPercentage).to.equal(80);
    (obj.spec as any).metrics.push({ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } });
    expect(v1.toStorage!(v1.fromStorage!(obj))).to.deep.equal({ ...obj, status: { desiredReplicas: 0, currentReplicas: 0 } });
  });

  it('Secret: the bootstrap token layout of document 2', () => {
    const secrets = def('', 'secrets');
    const token = (data: Record<string, string>, name = 'bootstrap-token-abcdef') => create(secrets, {
      metadata: { name, namespace: 'svc-system' }, type: labelKey('token', 'bootstrap'), stringData: data,
    });
    expect(token({ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:worker' }).causes).to.deep.equal([]);
    expect(fields(token({ 'token-id': 'ABC', 'token-secret': 'short' }).causes)).to.deep.equal([
      ['data[token-id]', 'FieldValueInvalid'], ['data[token-secret]', 'FieldValueInvalid'], ['metadata.name', 'FieldValueInvalid'],
    ]);
    expect(fields(token({ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'auth-extra-groups': 'admins' }).causes)).to.deep.equal([['data[auth-extra-groups]', 'FieldValueInvalid']]);
    expect(fields(create(secrets, { metadata: { name: 'tls', namespace: 'default' }, type: labelKey('tls'), stringData: { 'tls.crt': 'x' } }).causes)).to.deep.equal([['data[tls.key]', 'FieldValueRequired']]);
  });

  describe('well-known secret types in upstream spelling get the same rules as the product spelling', () => {
    const secrets = def('', 'secrets');
    const UP = 'kubernetes.io';
    const secret = (type: string, stringData: Record<string, string>, annotations?: Record<string, string>, name = 's') =>
      create(secrets, { metadata: { name, namespace: 'svc-system', ...(annotations ? { annotations } : {}) }, type, stringData });
    const cases: Array<[string, Record<string, string>, Record<string, string>, string[][]]> = [
      ['tls', { 'tls.crt': 'c', 'tls.key': 'k' }, { 'tls.crt': 'c' }, [['data[tls.key]', 'FieldValueRequired']]],
      ['dockerconfigjson', { '.dockerconfigjson': '{}' }, { '.dockerconfigjson': '{' }, [['data[.dockerconfigjson]', 'FieldValueInvalid']]],
      ['dockercfg', { '.dockercfg': '{}' }, {}, [['data[.dockercfg]', 'FieldValueRequired']]],
      ['basic-auth', { username: 'u' }, {}, [['data[username]', 'FieldValueRequired'], ['data[password]', 'FieldValueRequired']]],
      ['ssh-auth', { 'ssh-privatekey': 'k' }, { 'ssh-privatekey': '' }, [['data[ssh-privatekey]', 'FieldValueRequired']]],
    ];
    for (const [type, good, bad, refused] of cases) {
      it(`${UP}/${type}`, () => {
        for (const spelled of [`${UP}/${type}`, labelKey(type)]) {
          expect(secret(spelled, good).causes, spelled).to.deep.equal([]);
          expect(fields(secret(spelled, bad).causes), spelled).to.deep.equal(refused);
        }
      });
    }

    it(`${UP}/service-account-token needs the service-account.name annotation, in either spelling`, () => {
      const type = `${UP}/service-account-token`;
      expect(fields(secret(type, {}).causes)).to.deep.equal([[`metadata.annotations[${UP}/service-account.name]`, 'FieldValueRequired']]);
      expect(secret(type, {}, { [`${UP}/service-account.name`]: 'builder' }).causes).to.deep.equal([]);
      expect(secret(type, {}, { [labelKey('service-account.name')]: 'builder' }).causes).to.deep.equal([]);
    });

    it(`bootstrap.${UP}/token has the bootstrap token layout`, () => {
      const type = `bootstrap.${UP}/token`;
      const good = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' };
      expect(secret(type, good, undefined, 'bootstrap-token-abcdef').causes).to.deep.equal([]);
      expect(fields(secret(type, { 'token-id': 'ABC', 'token-secret': 'short' }, undefined, 'bootstrap-token-abcdef').causes)).to.deep.equal([
        ['data[token-id]', 'FieldValueInvalid'], ['data[token-secret]', 'FieldValueInvalid'], ['metadata.name', 'FieldValueInvalid'],
      ]);
    });

    it('the type stays immutable across spellings', () => {
      const old = secret(labelKey('tls'), { 'tls.crt': 'c', 'tls.key': 'k' }).obj;
      const next = { ...structuredClone(old), type: `${UP}/tls` };
      secrets.prepareForUpdate!(next, old);
      expect(fields(secrets.validate!(next, old))).to.deep.equal([['type', 'FieldValueInvalid']]);
    });
  });

  it('Namespace: its name under both spellings of the name label (a client value is overwritten); the finalizer in either spelling is kept', () => {
    const namespaces = def('', 'namespaces');
    const made = create(namespaces, { metadata: { name: 'team', labels: { 'kubernetes.io/metadata.name': 'other', [labelKey('metadata.name')]: 'x' } } }).obj;
    expect(made.metadata!.labels).to.deep.equal({ 'kubernetes.io/metadata.name': 'team', [labelKey('metadata.name')]: 'team' });
    expect((made.spec as any).finalizers).to.deep.equal(['svc']);
    expect((create(namespaces, { metadata: { name: 'up' }, spec: { finalizers: ['kubernetes'] } }).obj.spec as any).finalizers).to.deep.equal(['kubernetes']);
    expect((create(namespaces, { metadata: { name: 'mine' }, spec: { finalizers: ['example.com/x'] } }).obj.spec as any).finalizers).to.deep.equal(['example.com/x', 'svc']);
    expect(fields(create(namespaces, { metadata: { name: 'bad' }, spec: { finalizers: ['bogus', 'kubernetes', 'a b/c'] } }).causes))
      .to.deep.equal([['spec.finalizers[0]', 'FieldValueInvalid'], ['spec.finalizers[2]', 'FieldValueInvalid']]);
  });

  it('Event: both views convert into each other and share the rules every event meets', () => {
    const core = def('', 'events');
    const v1 = def(group('events'), 'events');
    const stored = {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Started', message: 'hello', source: { component: 'kubelet' }, firstTimestamp: 't1', lastTimestamp: 't2', count: 2,
      reportingComponent: 'kubelet', reportingInstance: 'n1', related: { kind: 'Node', name: 'n1' }, series: { count: 2, lastObservedTime: 't3' },
    };
    const viewed = v1.fromStorage!(stored);
    expect(viewed).to.deep.equal({
      apiVersion: `${group('events')}/v1`, kind: 'Event', metadata: stored.metadata, series: stored.series, reportingController: 'kubelet',
      reportingInstance: 'n1', reason: 'Started', regarding: stored.involvedObject, related: stored.related, note: 'hello',
      deprecatedSource: stored.source, deprecatedFirstTimestamp: 't1', deprecatedLastTimestamp: 't2', deprecatedCount: 2,
    });
    expect(v1.toStorage!(viewed)).to.deep.equal(stored);
    const timed = { metadata: { name: 'e', namespace: 'default' }, eventTime: '2025-01-01T00:00:00.000000Z', involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' } };
    expect(fields(core.validate!(timed))).to.deep.equal([['reportingComponent', 'FieldValueRequired'], ['reportingInstance', 'FieldValueRequired'],
      ['action', 'FieldValueRequired'], ['reason', 'FieldValueRequired']]);
    expect(fields(core.validate!({ ...timed, eventTime: undefined }))).to.deep.equal([['involvedObject.namespace', 'FieldValueInvalid']]);
    const reported = { ...timed, reportingComponent: 'not a name', reportingInstance: 'i', action: 'a'.repeat(129), reason: 'r' };
    expect(fields(core.validate!(reported))).to.deep.equal([['reportingComponent', 'FieldValueInvalid'], ['action', 'FieldValueInvalid']]);
  });

  it('CronJob: defaults, a valid schedule and time zone, a job template without selector', () => {
    const cronjobs = def('batch', 'cronjobs');
    const cron = (spec: Record<string, unknown>) => create(cronjobs, {
      metadata: { name: 'report', namespace: 'default' },
      spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'r', image: 'report:1' }], restartPolicy: 'OnFailure' } } } }, ...spec },
    });
    const ok = cron({ timeZone: 'Europe/Paris' });
    expect(ok.causes).to.deep.equal([]);
    expect(ok.obj.spec).to.deep.include({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    expect(fields(cron({ schedule: '61 * * * *' }).causes)).to.deep.equal([['spec.schedule', 'FieldValueInvalid']]);
    expect(fields(cron({ timeZone: 'Mars/Olympus' }).causes)).to.deep.equal([['spec.timeZone', 'FieldValueInvalid']]);
    expect(fields(cron({ schedule: '@hourly', jobTemplate: { spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'r', image: 'r' }], restartPolicy: 'Never' } } } } }).causes))
      .to.deep.equal([['spec.jobTemplate.spec.selector', 'FieldValueInvalid']]);
  });

  it('CertificateSigningRequest: the requestor is the creating user; the spec cannot change', () => {
    const csrs = def(group('certificates'), 'certificatesigningrequests');
    const request = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n').toString('base64');
    const obj: ApiObject = { metadata: { name: 'jane', uid: 'u' }, spec: { request, signerName: 'example.com/client', username: 'admin', groups: ['system:masters'] } };
    csrs.prepareForCreate!(obj, { username: 'jane', uid: '42', groups: ['dev'], extra: { team: { values: ['a'] } } });
    expect(obj.spec).to.deep.include({ username: 'jane', uid: '42', groups: ['dev'], extra: { team: ['a'] } });
    expect(csrs.validate!(obj)).to.deep.equal([]);
    const next = structuredClone(obj);
    (next.spec as any).signerName = 'example.com/other';
    csrs.prepareForUpdate!(next, obj);
    expect((next.spec as any).signerName).to.equal('example.com/client');
    expect(fields(csrs.validate!({ ...obj, spec: { signerName: 'nope', request: 'aGk=' } }))).to.deep.equal([['spec.request', 'FieldValueInvalid'], ['spec.signerName', 'FieldValueInvalid']]);
  });

  it('RBAC: roleRef immutable, subjects defaulted and checked', () => {
    const bindings = def(group('rbac.authorization'), 'rolebindings');
    const binding = (subjects: unknown[]) => ({
      metadata: { name: 'read', namespace: 'default' }, roleRef: { apiGroup: group('rbac.authorization'), kind: 'Role', name: 'reader' }, subjects,
    });
    const { obj, causes } = create(bindings, binding([{ kind: 'User', name: 'jane' }, { kind: 'ServiceAccount', name: 'ci', namespace: 'default' }]));
    expect(causes).to.deep.equal([]);
    expect((obj.subjects as any[]).map((s) => s.apiGroup)).to.deep.equal([group('rbac.authorization'), undefined]);
    expect(fields(create(bindings, binding([{ kind: 'Robot', name: 'r2' }])).causes)).to.deep.equal([['subjects[0].kind', 'FieldValueNotSupported']]);
    const next = structuredClone(obj);
    (next.roleRef as any).name = 'writer';
    expect(fields(bindings.validate!(next, obj))).to.deep.equal([['roleRef', 'FieldValueInvalid']]);
  });

  it('table columns kubectl shows for pods and deployments', () => {
    const pod = { metadata: { name: 'web', creationTimestamp: new Date(Date.now() - 90_000).toISOString() }, spec: { containers: [{}, {}] },
      status: { phase: 'Running', containerStatuses: [{ ready: true, restartCount: 1 }, { ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }] } };
    const pods = def('', 'pods').tableColumns!;
    expect(pods.filter((c) => !c.priority).map((c) => c.name)).to.deep.equal(['Name', 'Ready', 'Status', 'Restarts', 'Age']);
    expect(pods.filter((c) => !c.priority).map((c) => c.cell(pod))).to.deep.equal(['web', '1/2', 'CrashLoopBackOff', '3', '90s']);
    const deployments = def('apps', 'deployments').tableColumns!;
    expect(deployments.filter((c) => !c.priority).map((c) => c.name)).to.deep.equal(['Name', 'Ready', 'Up-to-date', 'Available', 'Age']);
    expect(deployments.slice(1, 4).map((c) => c.cell({ spec: { replicas: 3 }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } }))).to.deep.equal(['2/3', 3, 2]);
    expect(def('batch', 'jobs').tableColumns!.filter((c) => !c.priority).map((c) => c.name)).to.deep.equal(['Name', 'Status', 'Completions', 'Duration', 'Age']);
    expect(def('', 'services').tableColumns!.filter((c) => !c.priority).map((c) => c.name)).to.deep.equal(['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age']);
  });

  it('table columns read well-known labels and annotations in either spelling: node roles, the default StorageClass', () => {
    const roles = def('', 'nodes').tableColumns!.find((c) => c.name === 'Roles')!;
    expect(roles.cell({ metadata: { labels: { 'node-role.kubernetes.io/control-plane': '', [labelKey('worker', 'node-role')]: '', 'node-role.kubernetes.io/worker': '' } } }))
      .to.equal('control-plane,worker');
    const name = def(group('storage'), 'storageclasses').tableColumns!.find((c) => c.name === 'Name')!;
    expect(name.cell({ metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } })).to.equal('fast (default)');
    expect(name.cell({ metadata: { name: 'slow', annotations: { [labelKey('is-default-class', 'storageclass')]: 'true' } } })).to.equal('slow (default)');
  });

  it('HorizontalPodAutoscaler v1: the v2-only annotations are read in either spelling', () => {
    const v1 = def('autoscaling', 'horizontalpodautoscalers', 'v1');
    const pods = { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };
    const stored = v1.toStorage!({
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'default', annotations: { 'autoscaling.alpha.kubernetes.io/metrics': JSON.stringify([pods]) } },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, targetCPUUtilizationPercentage: 70 },
    });
    expect((stored.spec as any).metrics).to.deep.include(pods);
    expect(stored.metadata!.annotations ?? {}).to.deep.equal({});
  });
});
