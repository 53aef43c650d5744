import { expect } from 'chai';
import { AdmissionError, PodSecurity, namespacePodWarnings, type AdmissionRequest, type JsonObject, type PodLister } from '../../internal/admission/index.js';
import { Evaluator } from '../../internal/podsecurity/evaluator.js';
import { LATEST, policyToEvaluate, type Level, type Policy } from '../../internal/podsecurity/policy.js';
import { PodSecurityConfigError, decodePodSecurityConfiguration } from '../../internal/podsecurity/config.js';
import { GROUP_POD_SECURITY_CONFIG, upstreamGroup } from '../../internal/names/index.js';

type Json = Record<string, any>;
const evaluator = new Evaluator();
const judge = (level: Level, version: number, spec: Json, metadata: Json = {}) => evaluator.evaluate({ level, version }, metadata, spec);
const detail = (level: Level, spec: Json, metadata: Json = {}, version = LATEST) => judge(level, version, spec, metadata).detail();

const RESTRICTED_CONTAINER = {
  name: 'c', image: 'i',
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
};
const privileged: Policy = { enforce: { level: 'privileged', version: LATEST }, audit: { level: 'privileged', version: LATEST }, warn: { level: 'privileged', version: LATEST } };
const CONFIG = `${GROUP_POD_SECURITY_CONFIG}/v1`;

describe('PodSecurity', () => {
  describe('checks', () => {
    it('words a bare pod refused by restricted:latest as the platform does', () => {
      expect(detail('restricted', { containers: [{ name: 'c', image: 'i' }] })).to.equal(
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
        + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
        + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
        + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
      expect(judge('restricted', LATEST, { containers: [RESTRICTED_CONTAINER] }).allowed).to.equal(true);
      expect(judge('baseline', LATEST, { containers: [{ name: 'c', image: 'i' }] }).allowed).to.equal(true);
      expect(judge('privileged', LATEST, { hostPID: true }).allowed).to.equal(true);
    });

    it('refuses each baseline violation with its detail', () => {
      const c = (securityContext: Json, extra: Json = {}) => ({ containers: [{ name: 'a', image: 'i', securityContext, ...extra }] });
      const cases: Array<[Json, string, Json?]> = [
        [c({ privileged: true }), 'privileged (container "a" must not set securityContext.privileged=true)'],
        [{ hostNetwork: true, hostIPC: true }, 'host namespaces (hostNetwork=true, hostIPC=true)'],
        [{ volumes: [{ name: 'v', hostPath: { path: '/' } }] }, 'hostPath volumes (volume "v")'],
        [c({}, { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 8081 }] }), 'hostPort (container "a" uses hostPorts 8080, 8081)'],
        [c({}, { livenessProbe: { httpGet: { host: 'h', port: 80 } } }), 'probe or lifecycle host (container "a" uses probe or lifecycle host "h")'],
        [c({ capabilities: { add: ['NET_RAW', 'CHOWN', 'SYS_ADMIN'] } }), 'non-default capabilities (container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)'],
        [c({ procMount: 'Unmasked' }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
        [{ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_rmem', value: '1' }] } }, 'forbidden sysctls (kernel.msgmax)'],
        [c({ appArmorProfile: { type: 'Unconfined' } }), 'forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined")'],
        [{ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } } }, 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'],
        [c({ seccompProfile: { type: 'Unconfined' } }), 'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")'],
        [c({ windowsOptions: { hostProcess: true } }), 'hostProcess (container "a" must not set securityContext.windowsOptions.hostProcess=true)'],
      ];
      for (const [spec, want] of cases) expect(detail('baseline', spec)).to.equal(want);
    });

    it('refuses restricted volumes, root users and added capabilities', () => {
      const spec = {
        containers: [{ ...RESTRICTED_CONTAINER, securityContext: { ...RESTRICTED_CONTAINER.securityContext, runAsUser: 0, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'NET_ADMIN'] } } }],
        volumes: [{ name: 'ok', configMap: { name: 'x' } }, { name: 'n', nfs: { server: 's', path: '/' } }, { name: 'h', hostPath: { path: '/' } }],
      };
      expect(detail('restricted', spec)).to.equal(
        'unrestricted capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add), '
        + 'restricted volume types (volumes "n", "h" use restricted volume types "hostPath", "nfs"), '
        + 'runAsUser=0 (container "c" must not set runAsUser=0)');
    });

    it('lists sets sorted and annotations quoted, as the platform does', () => {
      const prefix = 'container.apparmor.security.beta.kubernetes.io/';
      const annotations = { [prefix]: 'bogus', [`${prefix}a`]: '', [`${prefix}b`]: 'runtime/default', [`${prefix}c`]: 'localhost/foo', [`${prefix}e`]: 'unconfined' };
      expect(judge('baseline', LATEST, {}, { annotations }).refusals).to.deep.equal([{
        allowed: false, reason: 'forbidden AppArmor profiles',
        detail: `annotations must not set AppArmor profile type to "${prefix}="bogus"", "${prefix}e="unconfined""`,
      }]);
      const mounts = { containers: [{ name: 'd', securityContext: { procMount: 'other' } }, { name: 'e', securityContext: { procMount: 'Unmasked' } }] };
      expect(detail('baseline', mounts)).to.equal('procMount (containers "d", "e" must not set securityContext.procMount to "Unmasked", "other")');
      const caps = { containers: [
        { name: 'a', securityContext: { capabilities: { add: ['FOO', 'BAR'] } } },
        { name: 'b', securityContext: { capabilities: { add: ['BAZ'], drop: ['NET_RAW'] } } },
        { name: 'c', securityContext: { capabilities: { add: ['CHOWN', 'NET_BIND_SERVICE'], drop: ['ALL'] } } },
      ] };
      expect(judge('restricted', LATEST, caps).refusals.find((r) => r.reason === 'unrestricted capabilities')?.detail).to.equal(
        'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add');
    });

    it('judges ephemeral and init containers too', () => {
      const spec = { containers: [RESTRICTED_CONTAINER], initContainers: [{ name: 'init', image: 'i', securityContext: { privileged: true } }],
        ephemeralContainers: [{ name: 'debug', image: 'i', securityContext: { privileged: true } }] };
      expect(detail('baseline', spec)).to.equal('privileged (containers "init", "debug" must not set securityContext.privileged=true)');
    });

    it('applies the checks of the policy version asked for', () => {
      const probe = { containers: [{ name: 'a', image: 'i', readinessProbe: { tcpSocket: { host: 'h', port: 1 } } }] };
      expect(judge('baseline', 33, probe).allowed).to.equal(true);
      expect(judge('baseline', 34, probe).allowed).to.equal(false);
      expect(judge('baseline', 99, probe).allowed, 'a future version judges as the newest').to.equal(false);
      const sysctl = { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '1' }] } };
      expect(judge('baseline', 28, sysctl).allowed).to.equal(false);
      expect(judge('baseline', 29, sysctl).allowed).to.equal(true);
      // Before v1.19 seccomp came from annotations, before v1.22 capabilities need not be dropped.
      const old = { containers: [{ name: 'c', image: 'i', securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true } }] };
      expect(judge('restricted', 18, old).allowed).to.equal(true);
      expect(detail('restricted', old, { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } }, 18))
        .to.equal('seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
      expect(judge('restricted', 21, { ...old, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }).allowed).to.equal(true);
      expect(judge('restricted', 22, { ...old, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }).allowed).to.equal(false);
      const windows = { os: { name: 'windows' }, containers: [{ name: 'c', image: 'i', securityContext: { runAsNonRoot: true } }] };
      expect(judge('restricted', LATEST, windows).allowed).to.equal(true);
      expect(judge('restricted', 24, windows).allowed).to.equal(false);
    });
  });

  describe('namespace labels', () => {
    it('read the policy over the defaults, in either spelling, warn following enforce', () => {
      const { policy, errors } = policyToEvaluate({ 'pod-security.svc.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted', 'pod-security.svc.io/audit-version': 'v1.30' }, privileged);
      expect(errors).to.deep.equal([]);
      expect(policy).to.deep.equal({
        enforce: { level: 'baseline', version: LATEST }, audit: { level: 'restricted', version: 30 }, warn: { level: 'baseline', version: LATEST },
      });
    });

    it('name bad levels and versions; a bad enforce level enforces restricted, bad audit and warn ones nothing', () => {
      const { policy, errors } = policyToEvaluate({ 'pod-security.svc.io/enforce': 'strict', 'pod-security.svc.io/warn-version': 'v2.0', 'pod-security.svc.io/audit': 'x' }, privileged);
      expect(errors.map((e) => [e.key, e.detail])).to.deep.equal([
        ['pod-security.svc.io/enforce', 'must be one of privileged, baseline, restricted'],
        ['pod-security.svc.io/audit', 'must be one of privileged, baseline, restricted'],
        ['pod-security.svc.io/warn-version', 'must be "latest" or "v1.x"'],
      ]);
      expect(policy.enforce.level).to.equal('restricted');
      expect(policy.audit.level).to.equal('privileged');
    });
  });

  describe('configuration', () => {
    it('defaults to privileged:latest with nothing exempt, and reads every version in both spellings', () => {
      expect(decodePodSecurityConfiguration(undefined)).to.deep.equal({ defaults: privileged, exemptions: { usernames: [], namespaces: [], runtimeClasses: [] } });
      for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
        for (const g of [GROUP_POD_SECURITY_CONFIG, upstreamGroup(GROUP_POD_SECURITY_CONFIG)]) {
          const config = decodePodSecurityConfiguration({ apiVersion: `${g}/${v}`, kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline', 'enforce-version': 'v1.20' } });
          expect(config.defaults.enforce).to.deep.equal({ level: 'baseline', version: 20 });
        }
      }
    });

    it('refuses bad levels, versions, exemptions and unknown fields', () => {
      const bad = (extra: Json) => () => decodePodSecurityConfiguration({ apiVersion: CONFIG, kind: 'PodSecurityConfiguration', ...extra });
      expect(bad({ defaults: { enforce: 'nope' } })).to.throw(PodSecurityConfigError, 'defaults.enforce: Invalid value: "nope": must be one of privileged, baseline, restricted');
      expect(bad({ defaults: { 'warn-version': '1.2' } })).to.throw(PodSecurityConfigError, 'defaults.warn-version: Invalid value: "1.2": must be "latest" or "v1.x"');
      expect(bad({ exemptions: { namespaces: ['ok', 'ok'] } })).to.throw(PodSecurityConfigError, 'exemptions.namespaces[1]: Duplicate value: "ok"');
      expect(bad({ exemptions: { usernames: [''] } })).to.throw(PodSecurityConfigError, 'username must not be empty');
      expect(bad({ exemptions: { runtimeClasses: ['Bad_Name'] } })).to.throw(PodSecurityConfigError, 'exemptions.runtimeClasses[0]');
      expect(bad({ default: {} })).to.throw(PodSecurityConfigError, 'unknown field "default"');
      expect(() => decodePodSecurityConfiguration({ apiVersion: 'v1', kind: 'PodSecurityConfiguration' })).to.throw(PodSecurityConfigError, /no kind/);
    });
  });

  describe('plugin', () => {
    const namespaces: Record<string, Json> = {
      restricted: { metadata: { name: 'restricted', labels: { 'pod-security.svc.io/enforce': 'restricted' } } },
      audited: { metadata: { name: 'audited', labels: { 'pod-security.svc.io/audit': 'baseline', 'pod-security.svc.io/warn': 'baseline' } } },
    };
    const noPods: PodLister = async () => ({ pods: [], total: 0 });
    const plugin = (config?: Json, pods = noPods): PodSecurity =>
      new PodSecurity(decodePodSecurityConfiguration(config ? { apiVersion: CONFIG, kind: 'PodSecurityConfiguration', ...config } : undefined),
        { get: async (name: string) => (namespaces[name] ? { terminating: false, namespace: namespaces[name] } : undefined) }, pods);
    const request = (namespace: string, object: Json, extra: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
      uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, subresource: '',
      name: object.metadata?.name ?? '', namespace, operation: 'CREATE', user: { username: 'alice', uid: '', groups: [], extra: {} } as any,
      object: object as JsonObject, dryRun: false, ...extra,
    });
    const hostPod = { metadata: { name: 'p' }, spec: { hostPID: true, containers: [{ name: 'c', image: 'i' }] } };

    it('enforces with a 403 naming the policy', async () => {
      const err = await plugin().admit(request('restricted', hostPod)).catch((e) => e);
      expect(err).to.be.instanceOf(AdmissionError);
      expect(err.code).to.equal(403);
      expect(err.message).to.match(/^pods "p" is forbidden: violates PodSecurity "restricted:latest": host namespaces \(hostPID=true\), allowPrivilegeEscalation != false/);
    });

    it('warns and audits pods and workload templates without refusing them', async () => {
      const answer = await plugin().admit(request('audited', hostPod));
      expect(answer).to.deep.equal({
        warnings: ['would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)'],
        auditAnnotations: {
          'pod-security.svc.io/enforce-policy': 'privileged:latest',
          'pod-security.svc.io/audit-violations': 'would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)',
        },
      });
      const deployment = { metadata: { name: 'd' }, spec: { template: hostPod } };
      const resource = { group: 'apps', version: 'v1', resource: 'deployments' };
      const templated = await plugin().admit(request('restricted', deployment, { resource, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }));
      expect(templated?.warnings?.[0]).to.match(/^would violate PodSecurity "restricted:latest": host namespaces/);
      expect(templated?.auditAnnotations).to.deep.equal({});
    });

    it('exempts by namespace, user and runtime class', async () => {
      const config = { exemptions: { namespaces: ['restricted'], usernames: ['bob'], runtimeClasses: ['kata'] } };
      expect(await plugin(config).admit(request('restricted', hostPod))).to.deep.equal({ auditAnnotations: { 'pod-security.svc.io/exempt': 'namespace' } });
      const user = { usernames: ['alice'] };
      expect(await plugin({ exemptions: user }).admit(request('restricted', hostPod))).to.deep.equal({ auditAnnotations: { 'pod-security.svc.io/exempt': 'user' } });
      const kata = { ...hostPod, spec: { ...hostPod.spec, runtimeClassName: 'kata' } };
      expect(await plugin(config).admit(request('audited', kata))).to.deep.equal({ auditAnnotations: { 'pod-security.svc.io/exempt': 'runtimeClass' } });
    });

    it('lets updates through that change no image', async () => {
      const old = { ...hostPod, spec: { ...hostPod.spec } };
      const labelled = { ...hostPod, metadata: { name: 'p', labels: { a: 'b' } } };
      expect(await plugin().admit(request('restricted', labelled, { operation: 'UPDATE', oldObject: old as JsonObject }))).to.equal(undefined);
      const debug = { ...hostPod, spec: { ...hostPod.spec, ephemeralContainers: [{ name: 'd', image: 'i' }] } };
      const err = await plugin().admit(request('restricted', debug, { operation: 'UPDATE', subresource: 'ephemeralcontainers', oldObject: old as JsonObject })).catch((e) => e);
      expect(err.code).to.equal(403);
    });

    it('uses the configured defaults for namespaces without labels', async () => {
      namespaces.plain = { metadata: { name: 'plain' } };
      const err = await plugin({ defaults: { enforce: 'baseline' } }).admit(request('plain', hostPod)).catch((e) => e);
      expect(err.message).to.include('violates PodSecurity "baseline:latest": host namespaces (hostPID=true)');
    });

    it('refuses bad namespace labels with 422 and warns about existing pods when enforce is raised', async () => {
      const ns = (labels: Json) => ({ metadata: { name: 'team', labels } });
      const nsRequest = (object: Json, oldObject?: Json) => request('', object, {
        resource: { group: '', version: 'v1', resource: 'namespaces' }, kind: { group: '', version: 'v1', kind: 'Namespace' }, name: 'team',
        operation: oldObject ? 'UPDATE' : 'CREATE', oldObject: oldObject as JsonObject,
      });
      const err = await plugin().admit(nsRequest(ns({ 'pod-security.svc.io/enforce': 'strict' }))).catch((e) => e);
      expect(err.code).to.equal(422);
      expect(err.message).to.equal('Namespace "team" is invalid: metadata.labels[pod-security.svc.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
      const pods: PodLister = async () => ({ pods: [hostPod, { ...hostPod, metadata: { name: 'a' } }, { metadata: { name: 'ok' }, spec: { containers: [{ name: 'c' }] } }], total: 3 });
      const answer = await plugin(undefined, pods).admit(nsRequest(ns({ 'pod-security.svc.io/enforce': 'baseline' }), ns({})));
      expect(answer?.warnings).to.deep.equal([
        'existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"',
        'a (and 1 other pod): host namespaces',
      ]);
      expect(await plugin(undefined, pods).admit(nsRequest(ns({ 'pod-security.svc.io/enforce': 'baseline' }), ns({ 'pod-security.svc.io/enforce': 'restricted' }))))
        .to.equal(undefined);
    });

    it('bounds the pods it judges on a label change', async () => {
      const many: PodLister = async (_ns, limit) => ({ pods: Array.from({ length: limit }, (_, i) => ({ metadata: { name: `p${i}` }, spec: { hostIPC: true } })), total: 10 });
      const warnings = await namespacePodWarnings(many, evaluator, 'team', { level: 'baseline', version: LATEST }, [], { maxPods: 4, timeoutMs: 1000 });
      expect(warnings).to.deep.equal([
        'new PodSecurity enforce level only checked against the first 4 of 10 existing pods',
        'existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"',
        'p0 (and 3 other pods): host namespaces',
      ]);
      const failing: PodLister = async () => { throw new Error('timed out'); };
      expect(await namespacePodWarnings(failing, evaluator, 'team', { level: 'baseline', version: LATEST }, []))
        .to.deep.equal(['failed to list pods while checking new PodSecurity enforce level']);
    });
  });
});
