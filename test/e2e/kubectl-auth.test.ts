import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const POLICY = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cm-reader
  namespace: team
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: frank-cm-reader
  namespace: team
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: cm-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: frank
`;

describe('kubectl auth can-i, can-i --list and reconcile under RBAC', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-kauth-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'frank-token,frank,u-1\ngrace-token,grace,u-2\n');
  let c: Cluster;
  let frank = '';
  let grace = '';
  const policyFile = join(dir, 'policy.yaml');
  writeFileSync(policyFile, POLICY);

  /** A kubeconfig of the admin's cluster entry for a bearer-token user. */
  const tokenKubeconfig = (name: string, token: string): string => {
    const config = YAML.parse(readFileSync(c.kubeconfig, 'utf8'));
    config.users = [{ name, user: { token } }];
    config.contexts[0].context.user = name;
    const path = join(dir, `${name}.kubeconfig`);
    writeFileSync(path, YAML.stringify(config), { mode: 0o600 });
    return path;
  };

  before(async () => {
    c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Node,RBAC'], authz: ['--authorization-mode=Node,RBAC'] } }).start();
    frank = tokenKubeconfig('frank', 'frank-token');
    grace = tokenKubeconfig('grace', 'grace-token');
    const ns = await kubectl(c.kubeconfig, ['create', 'namespace', 'team']);
    expect(ns.code, ns.stderr).to.equal(0);
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('auth reconcile by a user without rights is refused', async () => {
    const r = await kubectl(grace, ['auth', 'reconcile', '-f', policyFile]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/forbidden/);
  });

  it('auth reconcile -f creates the roles and bindings, and a second run changes nothing', async () => {
    const first = await kubectl(c.kubeconfig, ['auth', 'reconcile', '-f', policyFile]);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/role\.rbac\.authorization\.(svc|k8s)\.io\/cm-reader reconciled/);
    const again = await kubectl(c.kubeconfig, ['auth', 'reconcile', '-f', policyFile]);
    expect(again.code, again.stderr).to.equal(0);
    const role = await kubectl(c.kubeconfig, ['get', 'role', 'cm-reader', '-n', 'team', '-o', 'json']);
    expect(JSON.parse(role.stdout).rules).to.deep.equal([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]);
  });

  it('auth can-i answers yes and no for the bound user, and no for another', async () => {
    let yes = await kubectl(frank, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team']);
    for (let i = 0; i < 20 && yes.stdout.trim() !== 'yes'; i++) yes = await kubectl(frank, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team']);
    expect(yes.code, yes.stderr).to.equal(0);
    expect(yes.stdout.trim()).to.equal('yes');
    const no = await kubectl(frank, ['auth', 'can-i', 'delete', 'configmaps', '-n', 'team']);
    expect(no.code).to.equal(1);
    expect(no.stdout.trim()).to.equal('no');
    const other = await kubectl(grace, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team']);
    expect(other.stdout.trim()).to.equal('no');
    const admin = await kubectl(c.kubeconfig, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team', '--as=frank']);
    expect(admin.stdout.trim()).to.equal('yes');
  });

  it('auth can-i --list shows the rules RBAC gives in the namespace', async () => {
    const list = await kubectl(frank, ['auth', 'can-i', '--list', '-n', 'team']);
    expect(list.code, list.stderr).to.equal(0);
    const lines = list.stdout.split('\n');
    expect(lines[0]).to.match(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    expect(lines.some((l) => /^configmaps\s+\[\]\s+\[\]\s+\[get list\]/.test(l))).to.equal(true, list.stdout);
    expect(lines.some((l) => /^\s+\[\/version\]\s+\[\]\s+\[get\]/.test(l))).to.equal(true, list.stdout);
    const none = await kubectl(grace, ['auth', 'can-i', '--list', '-n', 'team']);
    expect(none.stdout).to.not.match(/^configmaps/m);
  });
});
