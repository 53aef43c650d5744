// The Webhook authorizer of the flags against a real HTTPS SubjectAccessReview
// server (v1 and v1beta1, answers kept for their TTLs, failures as no opinion),
// and ABAC policy files, in a whole cluster.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, waitFor } from '../lib/cluster.js';
import { startSarWebhook, type SarWebhook } from '../lib/sarwebhook.js';
import { authzExit } from '../lib/authzexit.js';

const USERS = ['allowed-alice', 'denied-dan', 'nobody', 'broken', 'abac-reader'];

describe('Webhook and ABAC authorization', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-authz-webhook-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, USERS.map((u) => `${u}-token,${u},uid-${u},"dev,team"`).join('\n') + '\n');
  const policy = join(dir, 'abac.jsonl');
  writeFileSync(policy, [
    '{"apiVersion": "abac.authorization.svc.io/v1beta1", "kind": "Policy", "spec": {"user": "abac-reader", "namespace": "default", "resource": "configmaps", "apiGroup": "", "readonly": true}}',
    '{"user": "allowed-alice", "namespace": "svc-public"}',
  ].join('\n'));
  let hook: SarWebhook;
  let c: Cluster;
  const authzFlags: string[] = [];
  const as = (user: string, method: string, path: string, body?: unknown) =>
    c.request(method, path, { body, anonymous: true, headers: { Authorization: `Bearer ${user}-token` } });
  const restartAuthz = async (flags: string[]) => {
    authzFlags.splice(0, authzFlags.length, ...flags);
    await c.kill('authz', 'SIGTERM');
    await c.startService('authz');
  };
  const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    hook = await startSarWebhook(dir);
    authzFlags.push('--authorization-mode=Webhook,RBAC', `--authorization-webhook-config-file=${hook.kubeconfig}`, '--authorization-webhook-version=v1',
      '--authorization-webhook-cache-authorized-ttl=2s', '--authorization-webhook-cache-unauthorized-ttl=1s');
    c = await new Cluster({ dataDir: dir, flags: { authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Webhook,RBAC'], authz: authzFlags } }).start();
  });
  after(async () => {
    await c?.stop();
    await hook?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks a v1 SubjectAccessReview with groups, and the webhook allows', async () => {
    const res = await as('allowed-alice', 'GET', `${CONFIGMAPS}?labelSelector=app%3Dweb`);
    expect(res.status, res.text).to.equal(200);
    const review = hook.reviews.find((r) => r.spec.user === 'allowed-alice');
    expect(review.apiVersion).to.equal('authorization.svc.io/v1');
    expect(review.kind).to.equal('SubjectAccessReview');
    expect(review.spec).to.deep.include({ user: 'allowed-alice', uid: 'uid-allowed-alice' });
    expect(review.spec.groups).to.include.members(['dev', 'team', 'system:authenticated']);
    expect(review.spec.resourceAttributes).to.deep.include({ namespace: 'default', verb: 'list', group: '', version: 'v1', resource: 'configmaps' });
    expect(review.spec.resourceAttributes.labelSelector).to.deep.equal({ requirements: [{ key: 'app', operator: 'In', values: ['web'] }] });
  });

  it('keeps an allowed answer for the authorized TTL: repeats reach the webhook no more until it runs out', async () => {
    const path = '/api/v1/namespaces/default/configmaps/none';
    expect((await as('allowed-alice', 'GET', path)).status).to.equal(404);
    const asked = hook.count('allowed-alice');
    for (let i = 0; i < 3; i++) expect((await as('allowed-alice', 'GET', path)).status).to.equal(404);
    expect(hook.count('allowed-alice')).to.equal(asked);
    await sleep(2_200);
    expect((await as('allowed-alice', 'GET', path)).status).to.equal(404);
    expect(hook.count('allowed-alice')).to.equal(asked + 1);
  });

  it('a denial ends the chain with the reason of the webhook, kept for the unauthorized TTL', async () => {
    const res = await as('denied-dan', 'GET', CONFIGMAPS);
    expect(res.status).to.equal(403);
    expect(res.body.reason).to.equal('Forbidden');
    expect(res.body.message).to.equal('configmaps is forbidden: User "denied-dan" cannot list resource "configmaps" in API group "" in the namespace "default": the webhook denies');
    expect((await as('denied-dan', 'GET', CONFIGMAPS)).status).to.equal(403);
    expect(hook.count('denied-dan')).to.equal(1);
    await sleep(1_200);
    expect((await as('denied-dan', 'GET', CONFIGMAPS)).status).to.equal(403);
    expect(hook.count('denied-dan')).to.equal(2);
  });

  it('no opinion passes to RBAC, which denies with 403', async () => {
    const res = await as('nobody', 'GET', CONFIGMAPS);
    expect(res.status).to.equal(403);
    expect(res.body.message).to.match(/^configmaps is forbidden: User "nobody" cannot list resource "configmaps" in API group "" in the namespace "default"/);
  });

  it('a failing webhook counts as no opinion and is measured', async () => {
    const res = await as('broken', 'GET', CONFIGMAPS);
    expect(res.status).to.equal(403);
    expect(hook.count('broken')).to.equal(1);
    const metrics = (await c.request('GET', '/metrics')).text;
    expect(metrics).to.match(/apiserver_authorization_webhook_evaluations_total\{name="webhook",result="error"\} 1/);
    expect(metrics).to.match(/apiserver_authorization_webhook_evaluations_fail_open_total\{name="webhook",result="error"\} 1/);
    expect(metrics).to.match(/apiserver_authorization_decisions_total\{type="Webhook",name="webhook",decision="allowed"\} \d+/);
    expect(metrics).to.match(/apiserver_authorization_decisions_total\{type="Webhook",name="webhook",decision="denied"\} \d+/);
    expect(metrics).to.contain('apiserver_authorization_webhook_duration_seconds_bucket{le="0.005",name="webhook",result="success"}');
  });

  it('asks v1beta1 with group when told', async () => {
    await restartAuthz(['--authorization-mode=Webhook,RBAC', `--authorization-webhook-config-file=${hook.kubeconfig}`]);
    const before = hook.reviews.length;
    expect((await as('allowed-alice', 'GET', '/api/v1/namespaces/default/secrets')).status).to.equal(200);
    const review = hook.reviews.slice(before).find((r) => r.spec.user === 'allowed-alice');
    expect(review.apiVersion).to.equal('authorization.svc.io/v1beta1');
    expect(review.spec.group).to.include.members(['dev', 'team']);
    expect(review.spec).to.not.have.property('groups');
  });

  it('ABAC: one JSON policy a line, versioned or legacy', async () => {
    await restartAuthz(['--authorization-mode=ABAC,RBAC', `--authorization-policy-file=${policy}`]);
    expect(await waitFor(async () => (await as('abac-reader', 'GET', CONFIGMAPS)).status === 200, 5_000)).to.equal(true);
    const write = await as('abac-reader', 'POST', CONFIGMAPS, { metadata: { name: 'x' } });
    expect(write.status).to.equal(403);
    expect(write.body.message).to.contain('No policy matched.');
    expect((await as('abac-reader', 'GET', '/api/v1/namespaces/default/secrets')).status).to.equal(403);
    expect((await as('allowed-alice', 'GET', '/api/v1/namespaces/svc-public/configmaps')).status).to.equal(200);
    expect((await as('allowed-alice', 'GET', CONFIGMAPS)).status).to.equal(403);
  });

  it('refuses to start with a bad policy file or an unknown webhook version', async () => {
    writeFileSync(join(dir, 'bad.jsonl'), '{"user":"a"}\nnot json\n');
    const bad = await authzExit(['--authorization-mode=ABAC', `--authorization-policy-file=${join(dir, 'bad.jsonl')}`]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/error reading policy file .*bad\.jsonl, line 2/);
    const version = await authzExit(['--authorization-mode=Webhook', `--authorization-webhook-config-file=${hook.kubeconfig}`, '--authorization-webhook-version=v2']);
    expect(version.code).to.equal(1);
    expect(version.stderr).to.contain('--authorization-webhook-version must be v1 or v1beta1, not "v2"');
  });
});
