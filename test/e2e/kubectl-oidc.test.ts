// kubectl 1.33 signing in with an OpenID Connect ID token handed over by an
// exec credential plugin (ExecCredential client.authentication.k8s.io/v1).
import { expect } from 'chai';
import { generateKeyPair } from 'jose';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { pkiPaths } from '../../internal/pki/index.js';
import { Cluster, waitFor } from '../lib/cluster.js';
import { kubectl, type KubectlResult } from '../lib/kubectl.js';
import { CLIENT_ID, OidcProvider } from '../lib/oidc.js';

/** The plugin: records the exec info kubectl passes, then prints the token of the token file. */
const PLUGIN = `
import { readFileSync, writeFileSync } from 'node:fs';
const [tokenFile, infoFile] = process.argv.slice(2);
writeFileSync(infoFile, process.env.KUBERNETES_EXEC_INFO ?? '');
const apiVersion = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? '{}').apiVersion;
process.stdout.write(JSON.stringify({ apiVersion, kind: 'ExecCredential', status: { token: readFileSync(tokenFile, 'utf8').trim() } }));
`;

describe('kubectl with an OIDC exec credential plugin', function () {
  this.timeout(120_000);
  let provider: OidcProvider;
  let cluster: Cluster;
  let dir: string;
  let kubeconfig: string;
  const tokenFile = () => join(dir, 'token');
  const infoFile = () => join(dir, 'exec-info.json');
  const k = (args: string[]) => kubectl(kubeconfig, args);

  before(async () => {
    provider = await new OidcProvider().start();
    dir = mkdtempSync(join(tmpdir(), 'svc-kubectl-oidc-'));
    writeFileSync(join(dir, 'ca.pem'), provider.caPem);
    writeFileSync(join(dir, 'plugin.mjs'), PLUGIN);
    cluster = await new Cluster({
      flags: {
        authn: [`--oidc-issuer-url=${provider.issuer}`, `--oidc-client-id=${CLIENT_ID}`, `--oidc-ca-file=${join(dir, 'ca.pem')}`,
          '--oidc-username-claim=email', '--oidc-groups-claim=groups', '--oidc-groups-prefix=oidc:'],
      },
    }).start();
    // Under RBAC the OIDC group reads what view grants, namespaces included.
    const bound = await kubectl(cluster.kubeconfig, ['create', 'clusterrolebinding', 'oidc-dev-view', '--clusterrole=view', '--group=oidc:dev']);
    expect(bound.code, bound.stderr).to.equal(0);
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'oidc',
      clusters: [{ name: 'svc', cluster: { server: `https://127.0.0.1:${cluster.port}`, 'certificate-authority': pkiPaths(cluster.dataDir).caCert } }],
      users: [{
        name: 'alice',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [join(dir, 'plugin.mjs'), tokenFile(), infoFile()],
            interactiveMode: 'Never',
          },
        },
      }],
      contexts: [{ name: 'oidc', context: { cluster: 'svc', user: 'alice' } }],
    }));
  });
  after(async () => {
    await cluster?.stop();
    await provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('auth whoami names the user and groups of the ID token', async () => {
    writeFileSync(tokenFile(), await provider.idToken({ sub: 'u-7', email: 'alice@example.com', email_verified: true, groups: ['dev'] }));
    let r: KubectlResult | undefined;
    // The server fetches the provider's keys in the background after it starts.
    expect(await waitFor(async () => (r = await k(['auth', 'whoami', '-o', 'json'])).code === 0, 30_000, 500)).to.equal(true, r?.stderr);
    expect(JSON.parse(r!.stdout).status.userInfo).to.deep.equal({ username: 'alice@example.com', groups: ['oidc:dev', 'system:authenticated'] });
    expect(JSON.parse(readFileSync(infoFile(), 'utf8'))).to.deep.include({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential' });
    const ns = await k(['get', 'ns', 'default', '-o', 'name']);
    expect(ns.code, ns.stderr).to.equal(0);
    expect(ns.stdout.trim()).to.equal('namespace/default');
  });

  it('is refused with Unauthorized for a token the provider did not sign', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    writeFileSync(tokenFile(), await provider.sign({ sub: 'u-7', email: 'alice@example.com' }, { key: privateKey as never }));
    const r = await k(['get', 'ns']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('You must be logged in to the server');
  });
});
