// Helpers of the token tests: a kubeconfig that authenticates with a bearer
// token, and a request as a token holder (no client certificate).
import { readFileSync, writeFileSync } from 'node:fs';
import YAML from 'yaml';
import { pkiPaths } from '../../internal/pki/index.js';
import type { Cluster, Response } from './cluster.js';

/** Writes a client configuration for the cluster that presents `token`. */
export function writeTokenKubeconfig(c: Cluster, path: string, token: string): string {
  const ca = readFileSync(pkiPaths(c.dataDir).caCert).toString('base64');
  writeFileSync(path, YAML.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${c.port}`, 'certificate-authority-data': ca } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }), { mode: 0o600 });
  return path;
}

/** A request that presents only a bearer token. */
export const asToken = (c: Cluster, token: string, method = 'GET', path = '/api/v1/namespaces/default/configmaps'): Promise<Response> =>
  c.request(method, path, { anonymous: true, headers: { Authorization: `Bearer ${token}` } });
