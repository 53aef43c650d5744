// The Node authorizer and NodeRestriction over HTTPS: a kubelet
// (`system:node:n1` in `system:nodes`, by client certificate or static token)
// reads its own Node, the pods bound to it and what they use, and may change
// only its own objects; the gateway's decision cache follows the node graph.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { ensurePki, pkiPaths } from '../../internal/pki/index.js';
import { issueLeaf, loadCa } from '../../internal/pki/certs.js';

const pod = (name: string, nodeName: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], ...extra },
});
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, data: {} });
const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

describe('Node authorization and NodeRestriction', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'n1-token,system:node:n1,node-n1,"system:nodes"\n');
  let c: Cluster;
  let cert: { cert: string; key: string };
  const asNode = (method: string, path: string, body?: unknown): Promise<Response> =>
    c.request(method, path, { body, anonymous: true, headers: { Authorization: 'Bearer n1-token' } });
  const asNodeCert = (method: string, path: string, body?: unknown): Promise<Response> => c.request(method, path, { body, clientCert: cert });

  before(async () => {
    await ensurePki(dir);
    const p = pkiPaths(dir);
    const ca = await loadCa(readFileSync(p.caCert, 'utf8'), readFileSync(p.caKey, 'utf8'));
    const issued = await issueLeaf(ca, { commonName: 'system:node:n1', organizations: ['system:nodes'], usage: 'client', validityDays: 1 });
    cert = { cert: issued.certPem, key: issued.keyPem };
    c = await new Cluster({
      dataDir: dir,
      flags: {
        authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Node,RBAC'],
        authz: ['--authorization-mode=Node,RBAC'],
        admission: ['--authorization-mode=Node,RBAC'],
      },
    }).start();
    for (const n of ['n1', 'n2']) expect((await c.request('POST', '/api/v1/nodes', { body: node(n) })).status).to.equal(201);
    for (const s of ['s-used', 's-other', 's-late']) expect((await c.request('POST', '/api/v1/namespaces/default/secrets', { body: secret(s) })).status).to.equal(201);
    const mine = pod('p1', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's-used' } }] });
    expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body: mine })).status).to.equal(201);
    expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p2', 'n2') })).status).to.equal(201);
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const related = async (path: string) => waitFor(async () => (await asNode('GET', path)).status === 200, 5_000, 50);

  it('reads its own Node, by token and by client certificate', async () => {
    expect((await asNode('GET', '/api/v1/nodes/n1')).status).to.equal(200);
    expect((await asNodeCert('GET', '/api/v1/nodes/n1')).status).to.equal(200);
  });

  it("is refused another node's Node with upstream's words", async () => {
    const res = await asNodeCert('GET', '/api/v1/nodes/n2');
    expect(res.status).to.equal(403);
    expect(res.body.reason).to.equal('Forbidden');
    expect(res.body.code).to.equal(403);
    expect(res.body.message).to.equal(`nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object`);
    expect(res.body.details).to.include({ name: 'n2', kind: 'nodes' });
  });

  it('reads the pods bound to it, not those of another node', async () => {
    expect(await related('/api/v1/namespaces/default/pods/p1')).to.equal(true);
    const other = await asNode('GET', '/api/v1/namespaces/default/pods/p2');
    expect(other.status).to.equal(403);
    expect(other.body.message).to.contain("no relationship found between node 'n1' and this object");
  });

  it('lists pods only with the spec.nodeName selector of itself', async () => {
    const all = await asNode('GET', '/api/v1/pods');
    expect(all.status).to.equal(403);
    expect(all.body.message).to.contain('can only list/watch pods with spec.nodeName field selector');
    const others = await asNode('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn2');
    expect(others.status).to.equal(403);
    const mine = await asNode('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
    expect(mine.status).to.equal(200);
    expect(mine.body.items.map((p: any) => p.metadata.name)).to.deep.equal(['p1']);
  });

  it('reads the secrets its pods use, not the others', async () => {
    expect(await related('/api/v1/namespaces/default/secrets/s-used')).to.equal(true);
    const other = await asNode('GET', '/api/v1/namespaces/default/secrets/s-other');
    expect(other.status).to.equal(403);
    expect(other.body.message).to.contain('secrets "s-other" is forbidden: User "system:node:n1" cannot get resource "secrets"');
    expect((await asNode('GET', '/api/v1/namespaces/default/secrets')).status).to.equal(403);
  });

  it('reads the config maps its pods use through env and projected volumes, not those of unbound pods', async () => {
    for (const name of ['cm-env', 'cm-projected', 'cm-unbound']) {
      expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name }, data: { k: 'v' } } })).status).to.equal(201);
    }
    const uses = pod('p-cms', 'n1', {
      containers: [{ name: 'c', image: 'busybox', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } }] }],
      volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'cm-projected' } }] } }],
    });
    const unbound = { ...pod('p-unbound', ''), spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', configMap: { name: 'cm-unbound' } }] } };
    for (const body of [uses, unbound]) expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body })).status).to.equal(201);
    expect(await related('/api/v1/namespaces/default/configmaps/cm-env')).to.equal(true);
    expect(await related('/api/v1/namespaces/default/configmaps/cm-projected')).to.equal(true);
    const refused = await asNode('GET', '/api/v1/namespaces/default/configmaps/cm-unbound');
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.contain("no relationship found between node 'n1' and this object");
  });

  it('is refused everything the node rules do not grant', async () => {
    const res = await asNode('GET', '/api/v1/namespaces');
    expect(res.status).to.equal(403);
    expect(res.body.message).to.equal('namespaces is forbidden: User "system:node:n1" cannot list resource "namespaces" in API group "" at the cluster scope');
    expect((await asNode('GET', '/api/v1/namespaces/default/services')).status).to.equal(200);
    const elsewhere = await asNode('GET', '/apis/coordination.svc.io/v1/namespaces/default/leases/n1');
    expect(elsewhere.status, elsewhere.text).to.equal(403);
    expect(elsewhere.body.message).to.contain('can only access leases in the "svc-node-lease" system namespace');
    // Its own lease is allowed: the answer is storage's (it does not exist yet).
    expect((await asNode('GET', '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/n1')).status).to.equal(404);
    expect((await asNode('GET', '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/n2')).status).to.equal(403);
  });

  it('a secret becomes readable once a pod bound to the node uses it, and unreadable when the pod goes, despite the decision cache', async () => {
    const path = '/api/v1/namespaces/default/secrets/s-late';
    expect((await asNode('GET', path)).status).to.equal(403);
    const hitsBefore = await cacheHits(c);
    expect((await asNode('GET', path)).status).to.equal(403);
    expect(await cacheHits(c)).to.be.greaterThan(hitsBefore);
    const uses = pod('p3', 'n1', { containers: [{ name: 'c', image: 'busybox', envFrom: [{ secretRef: { name: 's-late' } }] }] });
    expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body: uses })).status).to.equal(201);
    expect(await related(path)).to.equal(true);
    expect((await asNode('GET', path)).status).to.equal(200);
    expect((await c.request('DELETE', '/api/v1/namespaces/default/pods/p3?gracePeriodSeconds=0')).status).to.equal(200);
    expect(await waitFor(async () => (await asNode('GET', path)).status === 403, 5_000, 50)).to.equal(true);
  });

  it("requests tokens only for the service accounts of its pods, bound to its own pods", async () => {
    for (const sa of ['sa-used', 'sa-other']) {
      expect((await c.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: sa } } })).status).to.equal(201);
    }
    const created = await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p4', 'n1', { serviceAccountName: 'sa-used' }) });
    expect(created.status).to.equal(201);
    const theirs = await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p5', 'n2', { serviceAccountName: 'sa-used' }) });
    expect(theirs.status).to.equal(201);
    const request = (p: { metadata: { name: string; uid: string } } | undefined) => ({
      apiVersion: 'authentication.svc.io/v1', kind: 'TokenRequest',
      spec: { audiences: [], ...(p ? { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: p.metadata.name, uid: p.metadata.uid } } : {}) },
    });
    const tokenPath = (sa: string) => `/api/v1/namespaces/default/serviceaccounts/${sa}/token`;
    expect(await waitFor(async () => (await asNode('POST', tokenPath('sa-used'), request(created.body))).status === 201, 5_000, 50)).to.equal(true);
    const unrelated = await asNode('POST', tokenPath('sa-other'), request(created.body));
    expect(unrelated.status).to.equal(403);
    expect(unrelated.body.message).to.contain("no relationship found between node 'n1' and this object");
    const elsewhere = await asNode('POST', tokenPath('sa-used'), request(theirs.body));
    expect(elsewhere.status, elsewhere.text).to.equal(403);
    expect(elsewhere.body.message).to.contain('node requested token bound to a pod scheduled on a different node');
    const unbound = await asNode('POST', tokenPath('sa-used'), request(undefined));
    expect(unbound.status).to.equal(403);
    expect(unbound.body.message).to.contain('node requested token not bound to a pod');
  });

  describe('NodeRestriction', () => {
    it('refuses pods that are not mirror pods of the node', async () => {
      const res = await asNode('POST', '/api/v1/namespaces/default/pods', pod('plain', 'n1'));
      expect(res.status).to.equal(403);
      expect(res.body.reason).to.equal('Forbidden');
      expect(res.body.message).to.equal('pods "plain" is forbidden: pod does not have "svc.io/config.mirror" annotation, node "n1" can only create mirror pods');
    });

    it('admits a mirror pod owned by its own Node (the mirror annotation in either spelling), not one for another node', async () => {
      const n1 = (await c.request('GET', '/api/v1/nodes/n1')).body;
      const mirror = (name: string, nodeName: string, annotation = 'svc.io/config.mirror') => ({
        ...pod(name, nodeName),
        metadata: {
          name, namespace: 'default', annotations: { [annotation]: 'hash' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: n1.metadata.uid, controller: true }],
        },
      });
      expect((await asNode('POST', '/api/v1/namespaces/default/pods', mirror('mirror-n1', 'n1'))).status).to.equal(201);
      // A node agent written for the platform spells the annotation upstream's way.
      const upstream = await asNode('POST', '/api/v1/namespaces/default/pods', mirror('mirror-up', 'n1', 'kubernetes.io/config.mirror'));
      expect(upstream.status, upstream.text).to.equal(201);
      const res = await asNode('POST', '/api/v1/namespaces/default/pods', mirror('mirror-n2', 'n2'));
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('node "n1" can only create pods with spec.nodeName set to itself');
    });

    it('deletes only its own pods', async () => {
      const res = await asNode('DELETE', '/api/v1/namespaces/default/pods/p2');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('pods "p2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
      expect((await asNode('DELETE', '/api/v1/namespaces/default/pods/mirror-n1')).status).to.equal(200);
    });

    it('changes only its own Node, without node-restriction or foreign platform labels', async () => {
      const patch = (labels: Record<string, string>, name = 'n1') => c.request('PATCH', `/api/v1/nodes/${name}`, {
        body: { metadata: { labels } }, anonymous: true, headers: { Authorization: 'Bearer n1-token', 'Content-Type': 'application/merge-patch+json' },
      });
      const other = await patch({ a: 'b' }, 'n2');
      expect(other.status).to.equal(403);
      expect(other.body.message).to.equal('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
      const restricted = await patch({ 'node-restriction.svc.io/pool': 'secure' });
      expect(restricted.status).to.equal(403);
      expect(restricted.body.message).to.contain('is not allowed to modify labels: node-restriction.svc.io/pool');
      const platform = await patch({ 'svc.io/role': 'x' });
      expect(platform.status).to.equal(403);
      expect(platform.body.message).to.contain('svc.io/role');
      const allowed = await patch({ 'svc.io/hostname': 'n1', 'node.svc.io/instance-type': 'big', team: 'a' });
      expect(allowed.status, allowed.text).to.equal(200);
      expect(allowed.body.metadata.labels).to.include({ team: 'a', 'svc.io/hostname': 'n1' });
    });

    it('writes the status of its own pods only', async () => {
      const mine = (await c.request('GET', '/api/v1/namespaces/default/pods/p1')).body;
      const ok = await asNode('PUT', '/api/v1/namespaces/default/pods/p1/status', { ...mine, status: { phase: 'Running' } });
      expect(ok.status, ok.text).to.equal(200);
      const theirs = (await c.request('GET', '/api/v1/namespaces/default/pods/p2')).body;
      const res = await asNode('PUT', '/api/v1/namespaces/default/pods/p2/status', { ...theirs, status: { phase: 'Running' } });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('node "n1" can only update pod status for pods with spec.nodeName set to itself');
    });
  });
});

/** The gateway's decision cache hits so far, from /metrics. */
async function cacheHits(c: Cluster): Promise<number> {
  const res = await c.request('GET', '/metrics');
  const m = /svc_authorization_decision_cache_requests_total\{result="hit"\} (\d+)/.exec(res.text);
  return m ? Number(m[1]) : 0;
}
