// Client configuration files with the credentials embedded, in the format
// kubectl reads unchanged.
import { readFile, rename, writeFile } from 'node:fs/promises';
import YAML from 'yaml';
import { SERVER_NAME } from '../names/index.js';
import { ADMIN_USER, adminKubeconfigPath, type PkiPaths } from './paths.js';

export interface KubeconfigOptions {
  /** The server URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  caPath: string;
  certPath: string;
  keyPath: string;
  /** The name of the user entry. */
  user: string;
  /** The name of the context, made current. */
  context: string;
  /** The name of the cluster entry; SERVER_NAME when not given. */
  cluster?: string;
}

const base64File = async (path: string): Promise<string> => (await readFile(path)).toString('base64');

/** Writes a client configuration (mode 0600: it holds a private key). */
export async function writeKubeconfig(path: string, opts: KubeconfigOptions): Promise<void> {
  const cluster = opts.cluster ?? SERVER_NAME;
  const [ca, cert, key] = await Promise.all([opts.caPath, opts.certPath, opts.keyPath].map(base64File));
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: opts.server, 'certificate-authority-data': ca } }],
    users: [{ name: opts.user, user: { 'client-certificate-data': cert, 'client-key-data': key } }],
    contexts: [{ name: opts.context, context: { cluster, user: opts.user } }],
    'current-context': opts.context,
    preferences: {},
  };
  await writeConfig(path, config);
}

async function writeConfig(path: string, config: object): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, YAML.stringify(config, { lineWidth: 0 }), { mode: 0o600 });
  await rename(tmp, path);
}

/** Writes a configuration of the admin certificate of ensurePki reaching several servers (replicas of the API):
 * one cluster and one context per server, both named as given, the first context current. */
export async function writeAdminKubeconfigOf(path: string, servers: Array<{ name: string; server: string }>, paths: PkiPaths): Promise<void> {
  const [ca, cert, key] = await Promise.all([paths.caCert, paths.adminCert, paths.adminKey].map(base64File));
  await writeConfig(path, {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: servers.map(({ name, server }) => ({ name, cluster: { server, 'certificate-authority-data': ca } })),
    users: [{ name: ADMIN_USER, user: { 'client-certificate-data': cert, 'client-key-data': key } }],
    contexts: servers.map(({ name }) => ({ name, context: { cluster: name, user: ADMIN_USER } })),
    'current-context': servers[0].name,
    preferences: {},
  });
}

/** Writes <dataDir>/admin.kubeconfig for the admin certificate of ensurePki;
 * cluster and context `svc-apiserver`, user `admin`. Returns its path. */
export async function writeAdminKubeconfig(dataDir: string, server: string, paths: PkiPaths): Promise<string> {
  const path = adminKubeconfigPath(dataDir);
  await writeKubeconfig(path, {
    server, caPath: paths.caCert, certPath: paths.adminCert, keyPath: paths.adminKey,
    user: ADMIN_USER, context: SERVER_NAME, cluster: SERVER_NAME,
  });
  return path;
}

/** The client configuration ConfigMap cluster-info publishes: the server and its CA, no credentials. */
export function clusterInfoKubeconfig(server: string, caPem: Buffer): string {
  return YAML.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: '', cluster: { 'certificate-authority-data': caPem.toString('base64'), server } }],
    contexts: null, 'current-context': '', preferences: {}, users: null,
  });
}
