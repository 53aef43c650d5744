// The rules of pod specs beyond names and shapes: probes, hooks, sidecars,
// security contexts, DNS, affinity and topology spread.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { builtinRegistry } from '../../internal/registry/index.js';

const pods = builtinRegistry().lookup('', 'v1', 'pods')!;
const container = { name: 'app', image: 'nginx:1.27' };

/** The causes of a pod whose spec is `spec` over one plain container. */
function causesOf(spec: Record<string, unknown>): Array<[string | undefined, string | undefined, string | undefined]> {
  const pod: ApiObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [container], ...spec } };
  pods.prepareForCreate!(pod);
  return pods.validate!(pod).map((c: StatusCause) => [c.field, c.reason, c.message]);
}

const withContainer = (c: Record<string, unknown>, spec: Record<string, unknown> = {}) => causesOf({ containers: [{ ...container, ...c }], ...spec });

describe('registry: pod spec rules', () => {
  it('accepts a pod that uses every checked part correctly', () => {
    expect(causesOf({
      initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always', readinessProbe: { tcpSocket: { port: 15000 } } }, { name: 'setup', image: 'busybox' }],
      containers: [{
        ...container, livenessProbe: { httpGet: { path: '/', port: 'http' } }, startupProbe: { exec: { command: ['true'] }, failureThreshold: 30 },
        lifecycle: { preStop: { sleep: { seconds: 5 } } }, ports: [{ name: 'http', containerPort: 80 }],
        securityContext: { runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
      }],
      dnsPolicy: 'None', dnsConfig: { nameservers: ['10.96.0.10'], searches: ['svc.cluster.local'] },
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }] },
      },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
    })).to.deep.equal([]);
  });

  it('probes: one handler with a valid port; liveness and startup succeed once', () => {
    expect(withContainer({ livenessProbe: {} })).to.deep.equal([['spec.containers[0].livenessProbe', 'FieldValueRequired', 'Required value: must specify a handler type']]);
    expect(withContainer({ readinessProbe: { exec: { command: ['a'] }, tcpSocket: { port: 1 } } }))
      .to.deep.equal([['spec.containers[0].readinessProbe.tcpSocket', 'FieldValueForbidden', 'Forbidden: may not specify more than 1 handler type']]);
    expect(withContainer({ livenessProbe: { httpGet: { port: 70000 } } }).map((c) => c[0])).to.deep.equal(['spec.containers[0].livenessProbe.httpGet.port']);
    expect(withContainer({ startupProbe: { exec: { command: ['a'] }, successThreshold: 2 } }))
      .to.deep.equal([['spec.containers[0].startupProbe.successThreshold', 'FieldValueInvalid', 'Invalid value: 2: must be 1']]);
    expect(withContainer({ readinessProbe: { exec: { command: ['a'] }, successThreshold: 2 } })).to.deep.equal([]);
    expect(withContainer({ lifecycle: { postStart: {} } }).map((c) => c[0])).to.deep.equal(['spec.containers[0].lifecycle.postStart']);
  });

  it('init containers: only restartPolicy Always (a sidecar), and no probes or hooks unless sidecar', () => {
    const init = (c: Record<string, unknown>) => causesOf({ initContainers: [{ name: 'i', image: 'busybox', ...c }] });
    expect(init({ restartPolicy: 'Never' })).to.deep.equal([['spec.initContainers[0].restartPolicy', 'FieldValueNotSupported', 'Unsupported value: "Never": supported values: "Always"']]);
    expect(init({ readinessProbe: { exec: { command: ['a'] } } }))
      .to.deep.equal([['spec.initContainers[0].readinessProbe', 'FieldValueForbidden', 'Forbidden: may not be set for init containers without restartPolicy=Always']]);
    expect(withContainer({ restartPolicy: 'Always' }).map((c) => c[0])).to.deep.equal(['spec.containers[0].restartPolicy']);
  });

  it('mount paths are unique in a container, and host ports match container ports on the host network', () => {
    expect(withContainer({ volumeMounts: [{ name: 'v', mountPath: '/d' }, { name: 'v', mountPath: '/d' }] }, { volumes: [{ name: 'v', emptyDir: {} }] }))
      .to.deep.equal([['spec.containers[0].volumeMounts[1].mountPath', 'FieldValueInvalid', 'Invalid value: "/d": must be unique']]);
    expect(withContainer({ ports: [{ containerPort: 80, hostPort: 8080 }] }, { hostNetwork: true }).map((c) => c[2]))
      .to.deep.equal(['Invalid value: 8080: must match `containerPort` when `hostNetwork` is true']);
  });

  it('security contexts: ids in range, seccomp and AppArmor profiles with a localhost profile exactly when Localhost', () => {
    expect(withContainer({ securityContext: { runAsUser: -1 } }).map((c) => c[2])).to.deep.equal(['Invalid value: -1: must be between 0 and 2147483647, inclusive']);
    expect(causesOf({ securityContext: { seccompProfile: { type: 'Localhost' } } }).map((c) => c[0])).to.deep.equal(['spec.securityContext.seccompProfile.localhostProfile']);
    expect(causesOf({ securityContext: { appArmorProfile: { type: 'RuntimeDefault', localhostProfile: 'x' } } }).map((c) => c[0]))
      .to.deep.equal(['spec.securityContext.appArmorProfile.localhostProfile']);
    expect(causesOf({ securityContext: { seccompProfile: { type: 'Custom' } } }).map((c) => c[1])).to.deep.equal(['FieldValueNotSupported']);
  });

  it('dnsPolicy None needs dnsConfig with one to three IP nameservers', () => {
    expect(causesOf({ dnsPolicy: 'None' })).to.deep.equal([['spec.dnsConfig', 'FieldValueRequired', 'Required value: must provide `dnsConfig` when `dnsPolicy` is None']]);
    expect(causesOf({ dnsPolicy: 'None', dnsConfig: {} }).map((c) => c[0])).to.deep.equal(['spec.dnsConfig.nameservers']);
    expect(causesOf({ dnsConfig: { nameservers: ['1.1.1.1', '8.8.8.8', '9.9.9.9', '1.0.0.1'] } }).map((c) => c[2]))
      .to.deep.equal(['Invalid value: ["1.1.1.1","8.8.8.8","9.9.9.9","1.0.0.1"]: must not have more than 3 nameservers']);
    expect(causesOf({ dnsConfig: { nameservers: ['dns.example'] } }).map((c) => c[0])).to.deep.equal(['spec.dnsConfig.nameservers[0]']);
  });

  it('affinity: operators with the values they need, terms present, weights 1-100, topology keys', () => {
    const node = (expr: Record<string, unknown>) => causesOf({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', ...expr }] }] } } },
    });
    const at = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]';
    expect(node({ operator: 'In' })).to.deep.equal([[`${at}.values`, 'FieldValueRequired', "Required value: must be specified when `operator` is 'In' or 'NotIn'"]]);
    expect(node({ operator: 'Exists', values: ['a'] }).map((c) => c[1])).to.deep.equal(['FieldValueForbidden']);
    expect(node({ operator: 'Gt', values: ['x'] }).map((c) => c[0])).to.deep.equal([`${at}.values`]);
    expect(node({ operator: 'Near', values: ['a'] }).map((c) => c[1])).to.deep.equal(['FieldValueNotSupported']);
    expect(causesOf({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } }).map((c) => c[2]))
      .to.deep.equal(['Required value: must have at least one node selector term']);
    expect(causesOf({ affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, podAffinityTerm: { topologyKey: '' } }] } } }).map((c) => c[0]))
      .to.deep.equal(['spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
        'spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey']);
  });

  it('resources: standard or qualified names, whole extended resources that are not overcommitted, cpu or memory beside huge pages', () => {
    const res = (resources: Record<string, unknown>) => withContainer({ resources });
    const at = 'spec.containers[0].resources';
    expect(res({ limits: { cpu: '1', 'example.com/gpu': '2', 'hugepages-2Mi': '4Mi', memory: '1Gi' } })).to.deep.equal([]);
    // Requests default to the limits, so a bad name shows in both.
    expect(res({ limits: { gpu: '1' } })).to.deep.equal([`${at}.limits[gpu]`, `${at}.requests[gpu]`]
      .map((f) => [f, 'FieldValueInvalid', 'Invalid value: "gpu": must be a standard resource for containers']));
    expect(res({ limits: { 'example.com/gpu': '500m' } }).map((c) => c[2])).to.include('Invalid value: "500m": must be an integer');
    expect(res({ requests: { 'example.com/gpu': '1' } })).to.deep.equal([[`${at}.limits`, 'FieldValueRequired', 'Required value: Limit must be set for non overcommitable resources']]);
    expect(res({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } }).map((c) => c[2]))
      .to.deep.equal(['Invalid value: "1": must be equal to example.com/gpu limit of 2']);
    expect(res({ limits: { 'hugepages-2Mi': '4Mi' } })).to.deep.equal([[at, 'FieldValueForbidden', 'Forbidden: HugePages require cpu or memory']]);
  });

  it('topology spread: positive maxSkew, a topology key, a known action, each pair once', () => {
    const spread = (...constraints: Array<Record<string, unknown>>) => causesOf({ topologySpreadConstraints: constraints });
    expect(spread({ maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }).map((c) => c[2])).to.deep.equal(['Invalid value: 0: must be greater than zero']);
    expect(spread({ maxSkew: 1, whenUnsatisfiable: 'Maybe' }).map((c) => c[1])).to.deep.equal(['FieldValueRequired', 'FieldValueNotSupported']);
    const c = { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' };
    expect(spread(c, c).map((x) => x[1])).to.deep.equal(['FieldValueDuplicate']);
  });
});
