import { expect } from 'chai';
import { add, evaluatorFor, formatQuantity, parseQuantity, prettyPrint, quotaOf, type ResourceList } from '../../internal/quota/index.js';
import { limitedResources } from '../../internal/admission/plugins/resourcequota-config.js';
import { AdmissionFileError } from '../../internal/admission/config.js';

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
