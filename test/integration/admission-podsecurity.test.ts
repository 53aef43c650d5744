// PodSecurity over HTTPS, configured by --admission-control-config-file: the
// namespace labels' levels and versions enforced (403), warned (Warning
// headers) and audited (metrics), workload templates warned only, exemptions
// and defaults from the plugin's configuration, label validation and the
// warnings of a raised enforce level; and a bad configuration file stopping the
// admission service at start.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { GROUP_APISERVER_CONFIG, GROUP_POD_SECURITY_CONFIG, group } from '../../internal/names/index.js';

type Json = Record<string, any>;
const LABEL = 'pod-security.svc.io';

const admissionConfig = (pluginEntry: string) =>
  `apiVersion: ${GROUP_APISERVER_CONFIG}/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n${pluginEntry}`;
const POD_SECURITY_CONFIG = `apiVersion: ${GROUP_POD_SECURITY_CONFIG}/v1
kind: PodSecurityConfiguration
defaults:
  warn: baseline
exemptions:
  usernames: [exempt-user]
  runtimeClasses: [kata]
  namespaces: [ps-exempt]
`;

const container = (name = 'c', securityContext?: Json, extra: Json = {}) => ({ name, image: 'busybox', ...(securityContext ? { securityContext } : {}), ...extra });
const RESTRICTED_CONTEXT = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
const pod = (name: string, spec: Json, metadata: Json = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec });
const BARE_RESTRICTED_DETAIL = 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
  + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
  + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
  + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

/** The texts of a response's Warning headers. */
function warnings(res: Response): string[] {
  const raw = res.headers.warning;
  const values = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return values.flatMap((v) => v.split(/,\s*(?=299 )/)).map((v) => {
    const text = /^299 - "(.*)"$/.exec(v)?.[1] ?? v;
    return Buffer.from(text, 'latin1').toString('utf8').replace(/\\(["\\])/g, '$1');
  });
}

describe('PodSecurity admission', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-psa-'));
  let c: Cluster;

  const createNamespace = async (name: string, labels: Json = {}): Promise<Response> =>
    c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } });
  const createPod = (ns: string, body: Json, headers?: Record<string, string>): Promise<Response> =>
    c.request('POST', `/api/v1/namespaces/${ns}/pods`, { body, headers });
  const labelNamespace = (name: string, labels: Json): Promise<Response> =>
    c.request('PATCH', `/api/v1/namespaces/${name}`, { body: { metadata: { labels } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  const expectRefused = (res: Response, message: string) => {
    expect(res.status, res.text).to.equal(403);
    expect(res.body).to.deep.include({ reason: 'Forbidden', code: 403, message });
  };
  /** The sum of a counter's series that carry every given label. */
  const metric = async (name: string, labels: Json): Promise<number> => {
    const text = (await c.request('GET', '/metrics')).text;
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    return text.split('\n').filter((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  };

  before(async () => {
    writeFileSync(join(dir, 'podsecurity.yaml'), POD_SECURITY_CONFIG);
    // The plugin's file is named relative to the admission configuration's directory.
    writeFileSync(join(dir, 'admission.yaml'), admissionConfig('  path: podsecurity.yaml\n'));
    // Pods here run as no account: the ServiceAccount plugin, which needs the controllers' default accounts, is off.
    c = await new Cluster({ withoutControllerManager: true, flags: { admission: [`--admission-control-config-file=${join(dir, 'admission.yaml')}`, '--disable-admission-plugins=ServiceAccount'] } }).start();
    const namespaces: Array<[string, Json]> = [
      ['ps-baseline', { [`${LABEL}/enforce`]: 'baseline' }],
      ['ps-restricted', { [`${LABEL}/enforce`]: 'restricted' }],
      ['ps-warn', { [`${LABEL}/warn`]: 'restricted', [`${LABEL}/warn-version`]: 'v1.33' }],
      ['ps-audit', { [`${LABEL}/audit`]: 'baseline', [`${LABEL}/warn`]: 'privileged' }],
      ['ps-old', { [`${LABEL}/enforce`]: 'baseline', [`${LABEL}/enforce-version`]: 'v1.33' }],
      ['ps-plain', {}],
    ];
    for (const [name, labels] of namespaces) expect((await createNamespace(name, labels)).status).to.equal(201);
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('baseline', () => {
    it('accepts a pod within the level', async () => {
      const res = await createPod('ps-baseline', pod('fine', { containers: [container('c', { capabilities: { add: ['CHOWN'] } })] }));
      expect(res.status, res.text).to.equal(201);
      expect(warnings(res)).to.deep.equal([]);
    });

    it('refuses host namespaces, privileged containers, hostPath, host ports and added capabilities, naming each', async () => {
      const spec = {
        hostNetwork: true, hostPID: true,
        containers: [container('a', { privileged: true, capabilities: { add: ['NET_RAW'] } }, { ports: [{ containerPort: 80, hostPort: 80 }] })],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
      };
      expectRefused(await createPod('ps-baseline', pod('host', spec)),
        'pods "host" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add), '
        + 'host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "root"), hostPort (container "a" uses hostPort 80), '
        + 'privileged (container "a" must not set securityContext.privileged=true)');
    });

    it('refuses unsafe sysctls, seccomp, SELinux, AppArmor, procMount and probe hosts', async () => {
      const spec = {
        securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }], seccompProfile: { type: 'Unconfined' }, seLinuxOptions: { role: 'r' } },
        containers: [container('a', { procMount: 'Unmasked', appArmorProfile: { type: 'Unconfined' } }, { readinessProbe: { httpGet: { host: 'example.com', port: 80 } } })],
      };
      expectRefused(await createPod('ps-baseline', pod('unsafe', spec)),
        'pods "unsafe" is forbidden: violates PodSecurity "baseline:latest": forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined"), '
        + 'probe or lifecycle host (container "a" uses probe or lifecycle host "example.com"), procMount (container "a" must not set securityContext.procMount to "Unmasked"), '
        + 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: role may not be set), '
        + 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined"), forbidden sysctls (kernel.msgmax)');
    });

    it('reads the labels in their upstream spelling too', async () => {
      expect((await createNamespace('ps-upstream', { 'pod-security.kubernetes.io/enforce': 'baseline' })).status).to.equal(201);
      expectRefused(await createPod('ps-upstream', pod('host', { hostIPC: true, containers: [container()] })),
        'pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostIPC=true)');
    });

    it('refuses a privileged ephemeral container added to a running pod', async () => {
      expect((await createPod('ps-baseline', pod('debugged', { containers: [container()] }))).status).to.equal(201);
      const current = (await c.request('GET', '/api/v1/namespaces/ps-baseline/pods/debugged')).body;
      current.spec.ephemeralContainers = [{ ...container('debug', { privileged: true }), targetContainerName: 'c' }];
      const res = await c.request('PUT', '/api/v1/namespaces/ps-baseline/pods/debugged/ephemeralcontainers', { body: current });
      expectRefused(res, 'pods "debugged" is forbidden: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)');
    });
  });

  describe('restricted', () => {
    it('accepts a pod that drops everything and runs as non-root', async () => {
      const spec = { containers: [container('c', RESTRICTED_CONTEXT)], volumes: [{ name: 'cfg', configMap: { name: 'x' } }, { name: 'tmp', emptyDir: {} }] };
      const res = await createPod('ps-restricted', pod('fine', spec));
      expect(res.status, res.text).to.equal(201);
    });

    it('refuses a bare pod with the platform message', async () => {
      expectRefused(await createPod('ps-restricted', pod('bare', { containers: [container()] })),
        `pods "bare" is forbidden: violates PodSecurity "restricted:latest": ${BARE_RESTRICTED_DETAIL}`);
    });

    it('refuses root users, added capabilities and restricted volume types', async () => {
      const spec = {
        securityContext: { runAsUser: 0 },
        containers: [container('c', { ...RESTRICTED_CONTEXT, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'NET_ADMIN'] } })],
        volumes: [{ name: 'share', nfs: { server: 'nfs.example', path: '/' } }],
      };
      expectRefused(await createPod('ps-restricted', pod('root', spec)),
        'pods "root" is forbidden: violates PodSecurity "restricted:latest": unrestricted capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add), '
        + 'restricted volume types (volume "share" uses restricted volume type "nfs"), runAsUser=0 (pod must not set runAsUser=0)');
    });

    it('warns about a Deployment whose template violates the level but does not refuse it', async () => {
      const deployment = {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container()] } } },
      };
      const res = await c.request('POST', '/apis/apps/v1/namespaces/ps-restricted/deployments', { body: deployment });
      expect(res.status, res.text).to.equal(201);
      expect(warnings(res)).to.deep.equal([`would violate PodSecurity "restricted:latest": ${BARE_RESTRICTED_DETAIL}`]);
    });
  });

  describe('warn and audit modes', () => {
    it('warn admits the pod with a Warning naming the level and version', async () => {
      const res = await createPod('ps-warn', pod('warned', { containers: [container()] }));
      expect(res.status, res.text).to.equal(201);
      expect(warnings(res)).to.deep.equal([`would violate PodSecurity "restricted:v1.33": ${BARE_RESTRICTED_DETAIL}`]);
    });

    it('audit admits the pod silently and counts the violation', async () => {
      const denied = { decision: 'deny', mode: 'audit', policy_level: 'baseline', policy_version: 'latest', resource: 'pod', request_operation: 'create' };
      const before = await metric('pod_security_evaluations_total', denied);
      const res = await createPod('ps-audit', pod('audited', { hostIPC: true, containers: [container()] }));
      expect(res.status, res.text).to.equal(201);
      expect(warnings(res)).to.deep.equal([]);
      expect(await metric('pod_security_evaluations_total', denied)).to.equal(before + 1);
      expect(await metric('pod_security_evaluations_total', { decision: 'deny', mode: 'enforce' })).to.be.greaterThan(0);
    });

    it('namespaces without labels get the configured defaults (warn=baseline)', async () => {
      const res = await createPod('ps-plain', pod('defaulted', { hostPID: true, containers: [container()] }));
      expect(res.status, res.text).to.equal(201);
      expect(warnings(res)).to.deep.equal(['would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)']);
    });
  });

  describe('versions and label changes', () => {
    const probePod = (name: string) => pod(name, { containers: [container('c', undefined, { livenessProbe: { tcpSocket: { host: '10.0.0.1', port: 80 } } })] });

    it('judges by the version the labels name', async () => {
      expect((await createPod('ps-old', probePod('probe'))).status, 'probe hosts are allowed before v1.34').to.equal(201);
      expectRefused(await createPod('ps-old', pod('priv', { containers: [container('c', { privileged: true })] })),
        'pods "priv" is forbidden: violates PodSecurity "baseline:v1.33": privileged (container "c" must not set securityContext.privileged=true)');
    });

    it('warns about existing pods when the enforce level is raised, then enforces it', async () => {
      const res = await labelNamespace('ps-old', { [`${LABEL}/enforce-version`]: 'latest' });
      expect(res.status, res.text).to.equal(200);
      expect(warnings(res)).to.deep.equal([
        'existing pods in namespace "ps-old" violate the new PodSecurity enforce level "baseline:latest"',
        'probe: probe or lifecycle host',
      ]);
      // Admission reads namespaces from memory, which follows the change a moment later.
      const enforced = async () => (await c.request('POST', '/api/v1/namespaces/ps-old/pods?dryRun=All', { body: probePod('probe2') })).status === 403;
      expect(await waitFor(enforced, 5_000, 50)).to.equal(true);
      const lowered = await labelNamespace('ps-old', { [`${LABEL}/enforce`]: 'privileged' });
      expect(warnings(lowered)).to.deep.equal([]);
    });

    it('refuses bad levels and versions in namespace labels', async () => {
      const res = await createNamespace('ps-bad', { [`${LABEL}/enforce`]: 'strict' });
      expect(res.status).to.equal(422);
      expect(res.body).to.deep.include({ reason: 'Invalid',
        message: 'Namespace "ps-bad" is invalid: metadata.labels[pod-security.svc.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted' });
      const update = await labelNamespace('ps-plain', { [`${LABEL}/audit-version`]: '1.30' });
      expect(update.status).to.equal(422);
      expect(update.body.message).to.include('metadata.labels[pod-security.svc.io/audit-version]: Invalid value: "1.30": must be "latest" or "v1.x"');
    });
  });

  describe('exemptions', () => {
    it('exempt namespaces are told their policy is ignored, and their pods pass', async () => {
      const res = await createNamespace('ps-exempt', { [`${LABEL}/enforce`]: 'restricted' });
      expect(res.status).to.equal(201);
      expect(warnings(res)).to.deep.equal(['namespace "ps-exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored']);
      expect((await createPod('ps-exempt', pod('host', { hostPID: true, containers: [container()] }))).status).to.equal(201);
    });

    it('exempt users and runtime classes pass', async () => {
      const asExempt = { 'Impersonate-User': 'exempt-user', 'Impersonate-Group': 'system:masters' };
      expect((await createPod('ps-restricted', pod('by-exempt', { containers: [container()] }), asExempt)).status).to.equal(201);
      const kata = { apiVersion: `${group('node')}/v1`, kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata' };
      expect((await c.request('POST', `/apis/${group('node')}/v1/runtimeclasses`, { body: kata })).status).to.equal(201);
      const res = await createPod('ps-restricted', pod('sandboxed', { runtimeClassName: 'kata', containers: [container()] }));
      expect(res.status, res.text).to.equal(201);
      expect(await metric('pod_security_exemptions_total', { resource: 'pod' })).to.be.greaterThanOrEqual(2);
    });
  });

  describe('configuration file', () => {
    const entry = fileURLToPath(new URL('../../cmd/admission/main.js', import.meta.url));
    /** Starts the admission service alone with a configuration file; answers its exit code and output. */
    const start = (file: string): Promise<{ code: number | null; output: string }> => new Promise((resolve) => {
      const proc = spawn(process.execPath, [entry, `--admission-control-config-file=${file}`, `--listen=unix://${join(dir, 'x.sock')}`,
        `--storage-address=unix://${join(dir, 'none.sock')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      proc.stdout.on('data', (d) => { output += String(d); });
      proc.stderr.on('data', (d) => { output += String(d); });
      const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      proc.on('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
    });

    it('a bad file or a bad plugin configuration stops the admission service at start, saying why', async () => {
      writeFileSync(join(dir, 'bad.yaml'), admissionConfig('  configuration: {}\n').replace('plugins:', 'plugin:'));
      const bad = await start(join(dir, 'bad.yaml'));
      expect(bad.code).to.equal(1);
      expect(bad.output).to.include('strict decoding error: unknown field "plugin"');
      writeFileSync(join(dir, 'badlevel.yaml'), admissionConfig(`  configuration:\n    apiVersion: ${GROUP_POD_SECURITY_CONFIG}/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n`));
      const badLevel = await start(join(dir, 'badlevel.yaml'));
      expect(badLevel.code).to.equal(1);
      expect(badLevel.output).to.include('defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted');
      expect((await start(join(dir, 'absent.yaml'))).output).to.include('unable to read admission control configuration');
    });
  });
});
