// The authorization configuration file in a whole cluster: an external gRPC
// authorizer (the example group-authorizer, its own process, over TLS) and a
// webhook with match conditions in the chain, reloads good -> bad -> good, the
// refusal to start beside the legacy flags, and the gateway's decision cache
// dropped at once when an RBAC binding is revoked.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Cluster, waitFor } from '../lib/cluster.js';
import { startSarWebhook, type SarWebhook } from '../lib/sarwebhook.js';
import { authzExit } from '../lib/authzexit.js';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/group-authorizer/main.js', import.meta.url));
const USERS = ['grpc-gina', 'allowed-alice', 'skip-me', 'rbac-rita'];

describe('authorization configuration file', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-authz-config-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, USERS.map((u) => `${u}-token,${u},uid-${u},"${u === 'grpc-gina' ? 'grpc-friends' : 'others'}"`).join('\n') + '\n');
  const groupsFile = join(dir, 'groups.txt');
  const configFile = join(dir, 'authorization.yaml');
  let hook: SarWebhook;
  let example: ChildProcess;
  let exampleLog = '';
  let examplePort = 0;
  let caFile = '';
  let c: Cluster;
  const as = (user: string, method: string, path: string, body?: unknown) =>
    c.request(method, path, { body, anonymous: true, headers: { Authorization: `Bearer ${user}-token` } });
  const asked = (user: string) => exampleLog.split('\n').filter((l) => l.includes(`user="${user}"`)).length;

  const grpcAuthorizer = () => ({
    type: 'GRPC', name: 'groups',
    grpc: { address: `127.0.0.1:${examplePort}`, tls: { certificateAuthority: caFile }, timeout: '2s', failurePolicy: 'NoOpinion', authorizedTTL: '1s', unauthorizedTTL: '1s' },
  });
  const webhook = () => ({
    type: 'Webhook', name: 'hook',
    webhook: {
      timeout: '2s', subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1', failurePolicy: 'Deny',
      connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: hook.kubeconfig },
      matchConditions: [{ expression: "request.user != 'skip-me'" }, { expression: 'has(request.resourceAttributes)' }],
    },
  });
  const writeConfig = (authorizers: unknown[]) =>
    writeFileSync(configFile, YAML.stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'AuthorizationConfiguration', authorizers }));

  before(async () => {
    hook = await startSarWebhook(dir);
    const caPem = await createCa('example-ca', 1);
    const leaf = await issueLeaf(await loadCa(caPem.certPem, caPem.keyPem), { commonName: 'group-authorizer', hosts: ['127.0.0.1'], usage: 'server', validityDays: 1 });
    caFile = join(dir, 'example-ca.pem');
    writeFileSync(caFile, caPem.certPem);
    writeFileSync(join(dir, 'example.pem'), leaf.certPem);
    writeFileSync(join(dir, 'example-key.pem'), leaf.keyPem);
    writeFileSync(groupsFile, '# allowed groups\ngrpc-friends\n');
    example = spawn(process.execPath, [EXAMPLE, `--groups-file=${groupsFile}`, '--listen=127.0.0.1:0',
      `--tls-cert-file=${join(dir, 'example.pem')}`, `--tls-private-key-file=${join(dir, 'example-key.pem')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    example.stdout!.on('data', (d) => { exampleLog += String(d); });
    expect(await waitFor(() => /listening on 127\.0\.0\.1:(\d+)/.test(exampleLog), 10_000, 50)).to.equal(true);
    examplePort = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(exampleLog)![1]);
    writeConfig([grpcAuthorizer(), { type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }, webhook()]);
    c = await new Cluster({ dataDir: dir, flags: {
      authn: [`--token-auth-file=${tokens}`, `--authorization-config=${configFile}`], authz: [`--authorization-config=${configFile}`],
      admission: [`--authorization-config=${configFile}`],
    } }).start();
  });
  after(async () => {
    await c?.stop();
    if (example && example.exitCode === null) {
      await new Promise((resolve) => { example.once('exit', resolve); example.kill('SIGTERM'); });
    }
    await hook?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an external gRPC authorizer in the chain allows by group; repeats cost it no call', async () => {
    const res = await as('grpc-gina', 'GET', '/api/v1/namespaces/default/configmaps');
    expect(res.status, res.text).to.equal(200);
    const calls = asked('grpc-gina');
    expect(calls).to.equal(1);
    for (let i = 0; i < 3; i++) expect((await as('grpc-gina', 'GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
    expect(asked('grpc-gina')).to.equal(calls);
    // The example has no opinion on the others: the chain goes on.
    const other = await as('allowed-alice', 'GET', '/api/v1/namespaces/default/configmaps');
    expect(other.status).to.equal(200);
    expect(asked('allowed-alice')).to.equal(1);
  });

  it('match conditions keep requests from the webhook', async () => {
    const res = await as('skip-me', 'GET', '/api/v1/namespaces/default/configmaps');
    expect(res.status).to.equal(403);
    expect(hook.count('skip-me')).to.equal(0);
    expect((await as('allowed-alice', 'GET', '/version')).status).to.equal(200);
    expect(hook.reviews.some((r) => r.spec.nonResourceAttributes)).to.equal(false);
    expect((await c.request('GET', '/metrics')).text).to.match(/apiserver_authorization_match_condition_exclusions_total\{type="Webhook",name="hook"\} [1-9]/);
  });

  it('a revoked RBAC binding takes effect at once, although the decision was kept', async () => {
    const binding = {
      apiVersion: 'rbac.authorization.svc.io/v1', kind: 'RoleBinding', metadata: { name: 'rita-view', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'rbac-rita' }],
    };
    expect((await c.request('POST', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings', { body: binding })).status).to.equal(201);
    const path = '/api/v1/namespaces/default/pods';
    expect(await waitFor(async () => (await as('rbac-rita', 'GET', path)).status === 200, 5_000, 50)).to.equal(true);
    const hits = await cacheHits(c);
    expect((await as('rbac-rita', 'GET', path)).status).to.equal(200);
    expect(await cacheHits(c)).to.be.greaterThan(hits);
    expect((await c.request('DELETE', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings/rita-view')).status).to.equal(200);
    expect(await waitFor(async () => (await as('rbac-rita', 'GET', path)).status === 403, 2_000, 20)).to.equal(true);
  });

  it('without NATS every request asks the service; kept decisions return with NATS', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    expect((await as('grpc-gina', 'GET', path)).status).to.equal(200);
    await c.stopNats();
    const bypassed = await cacheCount(c, 'bypass');
    expect(await waitFor(async () => (await as('grpc-gina', 'GET', path)).status === 200 && await cacheCount(c, 'bypass') > bypassed, 10_000)).to.equal(true);
    const hits = await cacheCount(c, 'hit');
    for (let i = 0; i < 3; i++) expect((await as('grpc-gina', 'GET', path)).status).to.equal(200);
    expect(await cacheCount(c, 'hit')).to.equal(hits);
    await c.restartNats();
    expect(await waitFor(async () => {
      await as('grpc-gina', 'GET', path);
      return await cacheCount(c, 'hit') > hits;
    }, 15_000, 200)).to.equal(true);
  });

  it('reloads: a bad file keeps the chain in force and is logged, the next good one takes effect', async () => {
    expect((await as('grpc-gina', 'GET', '/api/v1/namespaces/default/secrets')).status).to.equal(200);
    writeFileSync(configFile, 'apiVersion: apiserver.config.svc.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Node\n  name: Bad_Name\n');
    const logged = () => (c.logs.get('authz') ?? []).join('');
    expect(await waitFor(() => logged().includes('does not load, the previous configuration stays in force'), 10_000)).to.equal(true);
    expect(logged()).to.contain('authorizers[0].name: Invalid value: "Bad_Name"');
    expect((await as('grpc-gina', 'GET', '/api/v1/namespaces/default/secrets')).status).to.equal(200);
    writeConfig([{ type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }]);
    expect(await waitFor(async () => (await as('grpc-gina', 'GET', '/api/v1/namespaces/default/secrets')).status === 403, 10_000)).to.equal(true);
    const metrics = (await c.request('GET', '/metrics')).text;
    expect(metrics).to.match(/apiserver_authorization_config_controller_automatic_reloads_total\{status="failure",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
    expect(metrics).to.match(/apiserver_authorization_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
  });

  it('refuses to start with both the file and --authorization-mode, or with a bad file', async () => {
    const both = await authzExit([`--authorization-config=${configFile}`, '--authorization-mode=RBAC']);
    expect(both.code).to.equal(1);
    expect(both.stderr).to.contain('--authorization-config can not be specified together with --authorization-mode');
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: apiserver.config.svc.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\n');
    const bad = await authzExit([`--authorization-config=${join(dir, 'bad.yaml')}`]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('authorizers: Required value: at least one authorization mode must be defined');
  });
});

async function cacheCount(c: Cluster, result: 'hit' | 'miss' | 'bypass'): Promise<number> {
  const m = new RegExp(`svc_authorization_decision_cache_requests_total\\{result="${result}"\\} (\\d+)`).exec((await c.request('GET', '/metrics')).text);
  return m ? Number(m[1]) : 0;
}
const cacheHits = (c: Cluster) => cacheCount(c, 'hit');
