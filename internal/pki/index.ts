// The server's own PKI under <dataDir>/pki: a CA, a serving certificate for the
// loopback addresses, an admin client certificate in the masters group and the
// controller-manager's client certificate (its permissions come from RBAC).
// Created at the first start, reused afterwards; leaves are reissued when they
// no longer fit (expiring soon, missing a host, signed by another CA).
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { GROUP_MASTERS, SERVER_NAME, USER_KUBE_CONTROLLER_MANAGER } from '../names/index.js';
import type { IssuedPem, KeyPair, LeafSpec } from './certs.js';
import { ADMIN_USER, pkiPaths, type PkiPaths } from './paths.js';

export { ADMIN_USER, pkiPaths, adminKubeconfigPath, type PkiPaths } from './paths.js';
export { writeKubeconfig, writeAdminKubeconfig, writeAdminKubeconfigOf, clusterInfoKubeconfig, type KubeconfigOptions } from './kubeconfig.js';

export interface PkiOptions {
  /** Further IP addresses or DNS names the serving certificate must cover. */
  servingHosts?: string[];
}

export const DEFAULT_SERVING_HOSTS = ['127.0.0.1', '::1', 'localhost'];
const CA_VALIDITY_DAYS = 3650;
const LEAF_VALIDITY_DAYS = 365;
/** Leaves closer than this to expiry are reissued at start. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** The certificate library, loaded only to issue: a start that finds every certificate fitting does without it. */
const certs = () => import('./certs.js');

const KEY_MODE = 0o600;
const CERT_MODE = 0o644;

/** Writes through a temporary file and a rename, so readers never see half a file. */
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

async function writePair(certPath: string, keyPath: string, pem: IssuedPem): Promise<void> {
  await writeAtomic(keyPath, pem.keyPem, KEY_MODE);
  await writeAtomic(certPath, pem.certPem, CERT_MODE);
}

/** Creates the CA in a fresh directory moved into place whole, so concurrent first
 * starts of several processes agree on one CA. */
async function ensureCa(paths: PkiPaths): Promise<void> {
  if (existsSync(paths.caCert) && existsSync(paths.caKey)) return;
  const parent = resolve(paths.dir, '..');
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(join(parent, '.pki-'));
  try {
    const ca = await (await certs()).createCa(`${SERVER_NAME}-ca`, CA_VALIDITY_DAYS);
    await writePair(join(staging, 'ca.crt'), join(staging, 'ca.key'), ca);
    try {
      await rename(staging, paths.dir);
      return;
    } catch {
      // The directory exists already: another process won, or it holds other files.
    }
    if (existsSync(paths.caCert) && existsSync(paths.caKey)) return;
    await writePair(paths.caCert, paths.caKey, ca);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** True when the leaf at certPath/keyPath is a pair, signed by the CA, far from
 * expiry and covering every host. */
async function leafFits(ca: X509Certificate, certPath: string, keyPath: string, hosts: string[]): Promise<boolean> {
  if (!existsSync(certPath) || !existsSync(keyPath)) return false;
  try {
    const cert = new X509Certificate(await readFile(certPath));
    const key = createPublicKey(createPrivateKey(await readFile(keyPath)));
    return key.equals(cert.publicKey)
      && cert.checkIssued(ca) && cert.verify(ca.publicKey)
      && Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS
      && hosts.every((h) => (isIP(h) ? cert.checkIP(h) : cert.checkHost(h, { wildcards: false })) !== undefined);
  } catch {
    return false;
  }
}

async function ensureLeaf(ca: () => Promise<KeyPair>, caCert: X509Certificate, certPath: string, keyPath: string, spec: LeafSpec): Promise<void> {
  if (await leafFits(caCert, certPath, keyPath, spec.hosts ?? [])) return;
  await writePair(certPath, keyPath, await (await certs()).issueLeaf(await ca(), spec));
}

async function ensure(dataDir: string, opts: PkiOptions): Promise<PkiPaths> {
  const paths = pkiPaths(dataDir);
  await ensureCa(paths);
  const [caPem, caKeyPem] = await Promise.all([readFile(paths.caCert, 'utf8'), readFile(paths.caKey, 'utf8')]);
  let loaded: Promise<KeyPair> | undefined;
  const ca = () => (loaded ??= certs().then((c) => c.loadCa(caPem, caKeyPem)));
  const caCert = new X509Certificate(caPem);
  const hosts = [...new Set([...DEFAULT_SERVING_HOSTS, ...(opts.servingHosts ?? [])])];
  await ensureLeaf(ca, caCert, paths.servingCert, paths.servingKey,
    { commonName: SERVER_NAME, hosts, usage: 'server', validityDays: LEAF_VALIDITY_DAYS });
  await ensureLeaf(ca, caCert, paths.adminCert, paths.adminKey,
    { commonName: ADMIN_USER, organizations: [GROUP_MASTERS], usage: 'client', validityDays: LEAF_VALIDITY_DAYS });
  await ensureLeaf(ca, caCert, paths.controllerManagerCert, paths.controllerManagerKey,
    { commonName: USER_KUBE_CONTROLLER_MANAGER, usage: 'client', validityDays: LEAF_VALIDITY_DAYS });
  return paths;
}

/** Calls in this process for one directory run one after the other. */
const pending = new Map<string, Promise<unknown>>();

/** Creates the PKI under <dataDir>/pki at the first call and reuses it afterwards. */
export function ensurePki(dataDir: string, opts: PkiOptions = {}): Promise<PkiPaths> {
  const dir = resolve(dataDir);
  const previous = pending.get(dir) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => ensure(dir, opts));
  pending.set(dir, next);
  return next;
}
