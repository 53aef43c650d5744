import { expect } from 'chai';
import { add, evaluatorFor, formatQuantity, parseQuantity, prettyPrint, quotaOf, type ResourceList } from '../../internal/quota/index.js';
import { limitedResources } from '../../internal/admission/plugins/resourcequota-config.js';
import { AdmissionFileError } from '../../internal/admission/config.js';
import { checkRequest } from '../../internal/admission/plugins/resourcequota-check.js';
import type { AdmissionRequest, JsonObject } from '../../internal/admission/index.js';

const q = (s: string) => parseQuantity(s)!;
const sum = (...xs: string[]) => formatQuantity(xs.map(q).reduce((a, b) => add({ x: a }, { x: b }).x));
const printed = (list: ResourceList) => prettyPrint(list);
const pods = evaluatorFor('', 'pods')!;

describe('quota: quantities and usage', () => {
  it('adds quantities exactly and prints them in their own format, canonically', () => {
    expect(sum('500m', '1')).to.equal('1500m');
    expect(sum('1Gi', '1Gi')).to.equal('2Gi');
    expect(sum('512Mi', '512Mi')).to.equal('1Gi');
    expect(sum('1Ki', '512')).to.equal('1536');
    expect(sum('0', '2k', '1000')).to.equal('3k');
    expect(formatQuantity(q('0.1'))).to.equal('100m');
    expect(formatQuantity(q('1e3'))).to.equal('1e3');
    expect(formatQuantity(q('1.5Gi'))).to.equal('1536Mi');
    expect(parseQuantity('1.5.5')).to.equal(undefined);
    expect(parseQuantity('Gi')).to.equal(undefined);
  });

  it('charges a pod its count and its compute resources, init containers and sidecars as the scheduler sees them', () => {
    const usage = pods.usage({
      spec: {
        containers: [{ name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi', 'example.com/gpu': '1' }, limits: { cpu: '200m' } } },
          { name: 'b', resources: { requests: { cpu: '100m', 'hugepages-2Mi': '4Mi' } } }],
        initContainers: [{ name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
          { name: 'init', resources: { requests: { cpu: '1', memory: '32Mi' } } }],
        overhead: { cpu: '10m' },
      },
    }, Date.now());
    expect(printed(usage)).to.equal('count/pods=1,cpu=1060m,hugepages-2Mi=4Mi,limits.cpu=210m,memory=64Mi,pods=1,'
      + 'requests.cpu=1060m,requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi,requests.memory=64Mi');
  });

  it('a finished pod keeps only its object count', () => {
    expect(printed(pods.usage({ spec: { containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] }, status: { phase: 'Succeeded' } }, Date.now())))
      .to.equal('count/pods=1');
  });

  it('pod scopes: BestEffort, Terminating, PriorityClass selectors, cross-namespace affinity', () => {
    const be = { spec: { containers: [{ name: 'a' }], activeDeadlineSeconds: 5, priorityClassName: 'high' } };
    const burstable = { spec: { containers: [{ name: 'a', resources: { requests: { memory: '1Mi' } } }], affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: ['x'] }] } } } };
    const scope = (scopeName: string, operator = 'Exists', values?: string[]) => ({ scopeName, operator, values });
    expect(pods.matchesScope(scope('BestEffort'), be)).to.equal(true);
    expect(pods.matchesScope(scope('NotBestEffort'), burstable)).to.equal(true);
    expect(pods.matchesScope(scope('Terminating'), be)).to.equal(true);
    expect(pods.matchesScope(scope('NotTerminating'), burstable)).to.equal(true);
    expect(pods.matchesScope(scope('PriorityClass', 'In', ['high']), be)).to.equal(true);
    expect(pods.matchesScope(scope('PriorityClass', 'NotIn', ['high']), be)).to.equal(false);
    expect(pods.matchesScope(scope('PriorityClass', 'NotIn', ['high']), burstable)).to.equal(true);
    expect(pods.matchesScope(scope('PriorityClass', 'DoesNotExist'), burstable)).to.equal(true);
    expect(pods.matchesScope(scope('CrossNamespacePodAffinity'), burstable)).to.equal(true);
    expect(pods.matchesScope(scope('CrossNamespacePodAffinity'), be)).to.equal(false);
  });

  it('a quota reads spec.scopes and scopeSelector as one list of requirements, and status.hard as what it enforces', () => {
    const quota = quotaOf({ metadata: { name: 'q', namespace: 'n' }, spec: { hard: { pods: '9' }, scopes: ['BestEffort'], scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['a'] }] } }, status: { hard: { pods: '3' } } });
    expect(quota.selectors).to.deep.equal([{ scopeName: 'BestEffort', operator: 'Exists' }, { scopeName: 'PriorityClass', operator: 'In', values: ['a'] }]);
    expect(formatQuantity(quota.hard.pods)).to.equal('3');
  });

  it('counts every other namespaced kind as count/<resource>.<group>, and ignores events', () => {
    expect(Object.keys(evaluatorFor('apps', 'deployments')!.usage({}, 0))).to.deep.equal(['count/deployments.apps']);
    expect(Object.keys(evaluatorFor('', 'configmaps')!.usage({}, 0))).to.deep.equal(['count/configmaps', 'configmaps']);
    expect(evaluatorFor('', 'events')).to.equal(undefined);
  });

  it('reads the plugin configuration in both spellings and refuses unknown fields and kinds', () => {
    const entry = { resource: 'pods', matchContains: ['cpu'] };
    expect(limitedResources({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [entry] })).to.deep.equal([entry]);
    expect(limitedResources({ apiVersion: 'resourcequota.admission.svc.io/v1beta1', kind: 'Configuration', limitedResources: [entry] })).to.deep.equal([entry]);
    expect(limitedResources(undefined)).to.deep.equal([]);
    expect(() => limitedResources({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'Configuration' })).to.throw(AdmissionFileError, 'no kind "Configuration"');
    expect(() => limitedResources({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ resource: 'pods', extra: 1 }] }))
      .to.throw(AdmissionFileError, 'unknown field "limitedResources[0].extra"');
    expect(() => limitedResources({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ matchScopes: [{ scopeName: 'Nope', operator: 'In' }] }] }))
      .to.throw(AdmissionFileError, 'limitedResources[0].resource: Required value');
  });
});

describe('quota: checking a write against quotas', () => {
  const request = (object: object, operation: 'CREATE' | 'UPDATE' = 'CREATE', oldObject?: object): AdmissionRequest => ({
    uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, subresource: '',
    name: 'p', namespace: 'n', operation, user: { username: 'u', uid: '', groups: [], extra: {} }, object: object as JsonObject,
    oldObject: oldObject as JsonObject | undefined, dryRun: false,
  });
  const quota = (hard: Record<string, string>, used: Record<string, string>, spec: object = {}) =>
    quotaOf({ metadata: { name: 'q', namespace: 'n' }, spec, status: { hard, used } });
  const podWith = (cpu?: string, priorityClassName?: string) => ({
    metadata: { name: 'p' }, spec: { priorityClassName, containers: [{ name: 'c', ...(cpu ? { resources: { requests: { cpu }, limits: { cpu } } } : {}) }] },
  });
  const refusal = (fn: () => unknown): string => {
    try { fn(); } catch (err) { return (err as Error).message; }
    return '';
  };

  it('charges every quota that applies and answers the quotas as they would be', () => {
    const [after] = checkRequest([quota({ 'requests.cpu': '1', pods: '3' }, { 'requests.cpu': '200m', pods: '1' })], request(podWith('300m')), pods, [], Date.now());
    expect(printed(after.used)).to.equal('pods=2,requests.cpu=500m');
  });

  it('refuses a quota whose usage is not known yet', () => {
    expect(refusal(() => checkRequest([quota({ pods: '3' }, {})], request(podWith()), pods, [], Date.now())))
      .to.equal('pods "p" is forbidden: status unknown for quota: q, resources: pods');
  });

  it('an update is charged only what it adds, and nothing when it adds nothing', () => {
    const quotas = [quota({ 'limits.cpu': '1' }, { 'limits.cpu': '600m' })];
    const old = { ...podWith('500m'), metadata: { name: 'p', resourceVersion: '5' } };
    expect(refusal(() => checkRequest(quotas, request(podWith('1'), 'UPDATE', old), pods, [], Date.now())))
      .to.equal('pods "p" is forbidden: exceeded quota: q, requested: limits.cpu=500m, used: limits.cpu=600m, limited: limits.cpu=1');
    expect(checkRequest(quotas, request(podWith('200m'), 'UPDATE', old), pods, [], Date.now())).to.equal(quotas);
  });

  it('limitedResources: a consumed resource or a scope needs a quota that covers it', () => {
    const limited = [{ resource: 'pods', matchContains: ['cpu'] }];
    expect(refusal(() => checkRequest([], request(podWith('1')), pods, limited, Date.now())))
      .to.equal('pods "p" is forbidden: insufficient quota to consume: cpu,limits.cpu,requests.cpu');
    expect(checkRequest([], request(podWith()), pods, limited, Date.now())).to.deep.equal([]);
    const byScope = [{ resource: 'pods', matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['gold'] }] }];
    expect(refusal(() => checkRequest([], request(podWith(undefined, 'gold')), pods, byScope, Date.now())))
      .to.equal('pods "p" is forbidden: insufficient quota to match these scopes: [{PriorityClass In [gold]}]');
    const covering = quota({ pods: '5' }, { pods: '0' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['gold'] }] } });
    expect(printed(checkRequest([covering], request(podWith(undefined, 'gold')), pods, byScope, Date.now())[0].used)).to.equal('pods=1');
  });
});
