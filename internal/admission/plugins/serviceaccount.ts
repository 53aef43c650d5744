// ServiceAccount: a new pod runs as `default` unless it names a ServiceAccount,
// which must exist; unless the pod or the account turns automount off, every
// container and init container mounts a projected volume with a bound token,
// the cluster's CA and the namespace; a pod without imagePullSecrets gets the
// account's. An account annotated enforce-mountable-secrets limits the pod to
// the secrets it lists. Mirror pods are never changed and may reference neither
// accounts nor secrets. Accounts are read from memory; a name memory lacks is
// read from storage (several times for `default`, which a controller creates
// with each namespace), as upstream does.
import { setTimeout as sleep } from 'node:timers/promises';
import { generateName } from '../../apimachinery/meta.js';
import {
  DEFAULT_SERVICE_ACCOUNT, ENFORCE_MOUNTABLE_SECRETS_ANNOTATION, MIRROR_POD_ANNOTATION, ROOT_CA_CONFIGMAP,
  SERVICE_ACCOUNT_MOUNT_PATH, SERVICE_ACCOUNT_VOLUME_PREFIX, wellKnownValue,
} from '../../names/index.js';
import type { StorageClient } from '../../storage/client.js';
import { KindCache } from '../kindcache.js';
import { containersOf, copyObject, isPodWrite, refuse, specOf, type Obj } from '../pods.js';
import type { AdmissionPlugin, AdmissionRequest, Operation, PluginAnswer } from '../types.js';

export const SERVICE_ACCOUNT = 'ServiceAccount';

interface Account {
  automount?: boolean;
  enforceMountable: boolean;
  secrets: string[];
  imagePullSecrets: string[];
}

const names = (refs: unknown): string[] => (Array.isArray(refs) ? refs.map((r: Obj) => String(r?.name ?? '')) : []);

const project = (o: Obj): Account => ({
  automount: typeof o.automountServiceAccountToken === 'boolean' ? o.automountServiceAccountToken : undefined,
  enforceMountable: wellKnownValue(o.metadata?.annotations, ENFORCE_MOUNTABLE_SECRETS_ANNOTATION) === 'true',
  secrets: names(o.secrets), imagePullSecrets: names(o.imagePullSecrets),
});

export const serviceAccountCache = (storage: StorageClient): KindCache<Account> => new KindCache(storage, '', 'serviceaccounts', project);

/** Lookups of `default` retried while its controller may not have created it yet (upstream: 10, 100-200 ms apart). */
const DEFAULT_ATTEMPTS = 10;
const RETRY_BASE_MS = 100;
/** The projected token's lifetime: 3607 s, which node agents may extend (upstream's warn-only bound). */
const TOKEN_EXPIRATION_SECONDS = 3607;
const PROJECTED_DEFAULT_MODE = 0o644;

const isMirror = (pod: Obj): boolean => wellKnownValue(pod.metadata?.annotations, MIRROR_POD_ANNOTATION) !== undefined;

abstract class ServiceAccountPlugin {
  readonly name = SERVICE_ACCOUNT;

  constructor(private readonly accounts: KindCache<Account>) {}

  stop(): void {
    this.accounts.stop();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  /** The pod's account; refused when it does not exist. */
  protected async account(request: AdmissionRequest, name: string): Promise<Account> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ATTEMPTS : 1;
    const pause = RETRY_BASE_MS + Math.floor(Math.random() * RETRY_BASE_MS);
    for (let i = 0; i < attempts; i++) {
      if (i) await sleep(pause);
      const found = await this.accounts.fetch(request.namespace, name);
      if (found) return found;
    }
    throw refuse(request, `error looking up service account ${request.namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`);
  }

  /** The checks of the validating phase, which the mutating one runs too. */
  protected async check(request: AdmissionRequest, pod: Obj): Promise<void> {
    const spec = (pod.spec ?? {}) as Obj;
    if (isMirror(pod)) return checkMirror(request, spec);
    if (!spec.serviceAccountName) {
      throw refuse(request, `no service account specified for pod ${request.namespace}/${pod.metadata?.name ?? ''}`);
    }
    const account = await this.account(request, spec.serviceAccountName);
    if (account.enforceMountable) {
      const problem = unlistedSecret(spec, account, spec.serviceAccountName);
      if (problem) throw refuse(request, problem);
    }
  }
}

/** Names the account, mounts its token and copies its pull secrets. */
export class ServiceAccountDefaults extends ServiceAccountPlugin implements AdmissionPlugin {
  readonly phase = 'mutating' as const;

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (!isPodWrite(request)) return;
    const pod = copyObject(request);
    if (isMirror(pod)) return this.check(request, pod);
    const spec = specOf(pod);
    // `serviceAccount` is the field's deprecated spelling, which v1 keeps equal to it.
    spec.serviceAccountName = spec.serviceAccountName || spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT;
    spec.serviceAccount = spec.serviceAccountName;
    const account = await this.account(request, spec.serviceAccountName);
    if ((spec.automountServiceAccountToken ?? account.automount) !== false) mountToken(spec);
    if (!spec.imagePullSecrets?.length && account.imagePullSecrets.length) {
      spec.imagePullSecrets = account.imagePullSecrets.map((name) => ({ name }));
    }
    await this.check(request, pod);
    return { object: pod };
  }
}

/** Refuses a pod without an existing account, or with secrets its account does not list. */
export class ServiceAccountChecks extends ServiceAccountPlugin implements AdmissionPlugin {
  readonly phase = 'validating' as const;

  async admit(request: AdmissionRequest): Promise<void> {
    if (isPodWrite(request)) await this.check(request, request.object as Obj);
  }
}

/** The token volume every container mounts, unless one already mounts something at the path. */
function mountToken(spec: Obj): void {
  const volumes = (spec.volumes ?? []) as Obj[];
  const existing = volumes.find((v) => String(v.name).startsWith(`${SERVICE_ACCOUNT_VOLUME_PREFIX}-`));
  const name = existing?.name ?? generateName(`${SERVICE_ACCOUNT_VOLUME_PREFIX}-`);
  let needed = false;
  for (const { container } of containersOf(spec)) {
    const mounts = (container.volumeMounts ?? []) as Obj[];
    if (mounts.some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
    container.volumeMounts = [...mounts, { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
    needed = true;
  }
  if (needed && !existing) spec.volumes = [...volumes, tokenVolume(name)];
}

const tokenVolume = (name: string): Obj => ({
  name,
  projected: {
    defaultMode: PROJECTED_DEFAULT_MODE,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
      { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
});

/** The secrets a spec names: volumes, projections, environment and pull secrets. */
function secretNames(spec: Obj): string[] {
  const out = names(spec.imagePullSecrets);
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (v.secret?.secretName) out.push(v.secret.secretName);
    for (const source of (v.projected?.sources ?? []) as Obj[]) if (source.secret?.name) out.push(source.secret.name);
  }
  for (const { container } of [...containersOf(spec), ...((spec.ephemeralContainers ?? []) as Obj[]).map((container) => ({ container }))]) {
    for (const env of (container.env ?? []) as Obj[]) if (env.valueFrom?.secretKeyRef?.name) out.push(env.valueFrom.secretKeyRef.name);
    for (const from of (container.envFrom ?? []) as Obj[]) if (from.secretRef?.name) out.push(from.secretRef.name);
  }
  return out;
}

function checkMirror(request: AdmissionRequest, spec: Obj): void {
  if (spec.serviceAccountName) throw refuse(request, 'a mirror pod may not reference service accounts');
  if (secretNames(spec).length) throw refuse(request, 'a mirror pod may not reference secrets');
  for (const v of (spec.volumes ?? []) as Obj[]) {
    for (const source of (v.projected?.sources ?? []) as Obj[]) {
      if (source.serviceAccountToken) throw refuse(request, 'a mirror pod may not use ServiceAccountToken volume projections');
      if (source.clusterTrustBundle) throw refuse(request, 'a mirror pod may not use ClusterTrustBundle projections');
    }
  }
}

/** The first secret the pod uses that its account does not list (upstream's words), if any. */
function unlistedSecret(spec: Obj, account: Account, accountName: string): string | undefined {
  const because = `is not allowed because service account ${accountName} does not reference that secret`;
  for (const v of (spec.volumes ?? []) as Obj[]) {
    const name = v.secret?.secretName;
    if (name !== undefined && !account.secrets.includes(name)) return `volume with secret.secretName="${name}" ${because}`;
  }
  for (const { list, container } of containersOf(spec)) {
    const what = list === 'initContainers' ? 'init container' : 'container';
    for (const env of (container.env ?? []) as Obj[]) {
      const name = env.valueFrom?.secretKeyRef?.name;
      if (name !== undefined && !account.secrets.includes(name)) {
        return `${what} ${container.name} with envVar ${env.name} referencing secret.secretName="${name}" ${because}`;
      }
    }
    for (const from of (container.envFrom ?? []) as Obj[]) {
      const name = from.secretRef?.name;
      if (name !== undefined && !account.secrets.includes(name)) return `${what} ${container.name} with envFrom referencing secret.secretName="${name}" ${because}`;
    }
  }
  const pull = names(spec.imagePullSecrets).findIndex((n) => !account.imagePullSecrets.includes(n));
  if (pull >= 0) {
    return `imagePullSecrets[${pull}].name="${names(spec.imagePullSecrets)[pull]}" is not allowed because service account ${accountName} does not reference that imagePullSecret`;
  }
  return undefined;
}
