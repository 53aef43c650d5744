// NodeRestriction: a node's kubelet (`system:node:<name>` in `system:nodes`) may
// change only its own Node and the pods bound to it. It may create only mirror
// pods of itself that use no other objects, delete only its own pods, write
// only the status of its pods and claims, not set node-restriction labels nor
// platform labels outside the kubelet's own, not change its taints, and touch
// only its own Lease and CSINode. Other users pass untouched.
import { nodeIdentity } from '../../authz/node/authorizer.js';
import { podConfigMaps, podSecrets } from '../../authz/node/references.js';
import { group, DOMAIN, MIRROR_POD_ANNOTATION, UPSTREAM_LABEL_DOMAIN, UPSTREAM_DOMAIN, wellKnownValue } from '../../names/index.js';
import { objectKey } from '../../storage/keys.js';
import { grpc, isServiceError } from '../../rpc/index.js';
import { forbidden, notFound } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation } from '../types.js';
import type { NamespaceStore } from '../namespaces.js';

export const NODE_RESTRICTION = 'NodeRestriction';

type Json = Record<string, any>;
const PLATFORM_DOMAINS = [DOMAIN, UPSTREAM_LABEL_DOMAIN, UPSTREAM_DOMAIN];
const RESTRICTED_PREFIX = 'node-restriction';

/** The kubelet's own labels, by key, and the label namespaces it owns (`kubelet.<domain>`, `node.<domain>`). */
const KUBELET_LABELS = new Set(PLATFORM_DOMAINS.flatMap((d) => [
  `${d}/hostname`, `topology.${d}/zone`, `topology.${d}/region`, `failure-domain.beta.${d}/zone`, `failure-domain.beta.${d}/region`,
  `beta.${d}/instance-type`, `node.${d}/instance-type`, `${d}/os`, `${d}/arch`, `beta.${d}/os`, `beta.${d}/arch`,
]));

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

function forbiddenLabel(key: string): boolean {
  const ns = labelNamespace(key);
  if (PLATFORM_DOMAINS.some((d) => inDomain(ns, `${RESTRICTED_PREFIX}.${d}`))) return true;
  if (!PLATFORM_DOMAINS.some((d) => inDomain(ns, d))) return false;
  const kubelet = KUBELET_LABELS.has(key) || PLATFORM_DOMAINS.some((d) => inDomain(ns, `kubelet.${d}`) || inDomain(ns, `node.${d}`));
  return !kubelet;
}

/** The label keys added, removed or changed between two label maps. */
function modifiedLabels(next: Record<string, string> = {}, prev: Record<string, string> = {}): string[] {
  const keys = new Set([...Object.keys(next), ...Object.keys(prev)]);
  return [...keys].filter((k) => next[k] !== prev[k]).sort();
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const meta = (obj: JsonObject | undefined): Json => (obj?.metadata ?? {}) as Json;
const spec = (obj: JsonObject | undefined): Json => (obj?.spec ?? {}) as Json;

export class NodeRestriction implements AdmissionPlugin {
  readonly name = NODE_RESTRICTION;
  readonly phase = 'validating' as const;

  constructor(private readonly store: NamespaceStore) {}

  handles(operation: Operation): boolean {
    return operation !== 'CONNECT';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    const node = nodeIdentity(request.user);
    if (node === undefined) return;
    if (!node) throw this.refuse(request, `could not determine node from user ${JSON.stringify(request.user.username)}`);
    const { group: g, resource } = request.resource;
    if (g === '' && resource === 'pods') return this.pods(node, request);
    if (g === '' && resource === 'nodes') return this.node(node, request);
    if (g === '' && resource === 'persistentvolumeclaims') return this.pvc(node, request);
    if (g === '' && resource === 'serviceaccounts') return this.serviceAccount(node, request);
    if (g === group('coordination') && resource === 'leases') return this.sameName(node, request, 'can only access node lease with the same name as the requesting node');
    if (g === group('storage') && resource === 'csinodes') return this.sameName(node, request, 'can only access CSINode with the same name as the requesting node');
  }

  private refuse(request: AdmissionRequest, detail: string) {
    return forbidden(request.resource, request.name || meta(request.object).name || '', detail);
  }

  private async pods(node: string, request: AdmissionRequest): Promise<void> {
    switch (request.subresource) {
      case '': return this.pod(node, request);
      case 'status': return this.podStatus(node, request);
      case 'eviction': return this.eviction(node, request);
      default: throw this.refuse(request, `unexpected pod subresource ${JSON.stringify(request.subresource)}, only 'status' and 'eviction' are allowed`);
    }
  }

  private async pod(node: string, request: AdmissionRequest): Promise<void> {
    if (request.operation === 'CREATE') return this.mirrorPod(node, request);
    if (request.operation === 'DELETE') {
      if (spec(request.oldObject).nodeName !== node) throw this.refuse(request, `node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    throw this.refuse(request, `unexpected operation ${JSON.stringify(request.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`);
  }

  private async mirrorPod(node: string, request: AdmissionRequest): Promise<void> {
    const pod = request.object ?? {};
    const n = JSON.stringify(node);
    const fail = (detail: string) => this.refuse(request, detail);
    if (wellKnownValue(meta(pod).annotations, MIRROR_POD_ANNOTATION) === undefined) {
      throw fail(`pod does not have ${JSON.stringify(MIRROR_POD_ANNOTATION.own)} annotation, node ${n} can only create mirror pods`);
    }
    if (spec(pod).nodeName !== node) throw fail(`node ${n} can only create pods with spec.nodeName set to itself`);
    const owners: Json[] = Array.isArray(meta(pod).ownerReferences) ? meta(pod).ownerReferences : [];
    if (owners.length > 1) throw fail(`node ${n} can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) throw fail(`node ${n} can only create pods with an owner reference set to itself`);
    if (owner.controller !== true) throw fail(`node ${n} can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw fail(`node ${n} must not set blockOwnerDeletion on an owner reference`);
    const stored = await this.read(objectKey('', 'nodes', '', node));
    if (!stored) throw notFound({ group: '', resource: 'nodes' }, node);
    if (owner.uid !== meta(stored).uid) throw fail(`node ${node} UID mismatch: expected ${owner.uid} got ${meta(stored).uid}`);
    const podSpec = spec(pod);
    if (podSpec.serviceAccountName) throw fail(`node ${n} can not create pods that reference a service account`);
    if (podSecrets(podSpec).length) throw fail(`node ${n} can not create pods that reference secrets`);
    if (podConfigMaps(podSpec).length) throw fail(`node ${n} can not create pods that reference configmaps`);
    const volumes: Json[] = Array.isArray(podSpec.volumes) ? podSpec.volumes : [];
    if (volumes.some((v) => (v.projected?.sources ?? []).some((s: Json) => s?.clusterTrustBundle))) throw fail(`node ${n} can not create pods that reference clustertrustbundles`);
    if (volumes.some((v) => v.persistentVolumeClaim)) throw fail(`node ${n} can not create pods that reference persistentvolumeclaims`);
  }

  private podStatus(node: string, request: AdmissionRequest): void {
    if (request.operation !== 'UPDATE') throw this.refuse(request, `unexpected operation ${JSON.stringify(request.operation)}`);
    const n = JSON.stringify(node);
    if (spec(request.oldObject).nodeName !== node) throw this.refuse(request, `node ${n} can only update pod status for pods with spec.nodeName set to itself`);
    if (!same(meta(request.object).labels, meta(request.oldObject).labels)) throw this.refuse(request, `node ${n} cannot update labels through pod status`);
    const claims = (obj?: JsonObject) => ((obj?.status ?? {}) as Json).resourceClaimStatuses;
    if (!same(claims(request.object), claims(request.oldObject))) throw this.refuse(request, `node ${n} cannot update resource claim statues`);
  }

  private async eviction(node: string, request: AdmissionRequest): Promise<void> {
    if (request.operation !== 'CREATE') throw this.refuse(request, `unexpected operation ${JSON.stringify(request.operation)}`);
    const podName = request.name || meta(request.object).name;
    if (!podName) throw this.refuse(request, 'could not determine pod from request data');
    const pod = await this.read(objectKey('', 'pods', request.namespace, podName));
    if (!pod) throw notFound({ group: '', resource: 'pods' }, podName);
    if (spec(pod).nodeName !== node) throw this.refuse(request, `node ${node} can only evict pods with spec.nodeName set to itself`);
  }

  private node(node: string, request: AdmissionRequest): void {
    const name = request.name || meta(request.object).name || '';
    const n = JSON.stringify(node);
    if (name !== node) throw this.refuse(request, `node ${n} is not allowed to modify node ${JSON.stringify(name)}`);
    if (request.operation === 'CREATE') {
      if (spec(request.object).configSource) throw this.refuse(request, `node ${n} is not allowed to create pods with a non-nil configSource`);
      const bad = modifiedLabels(meta(request.object).labels).filter(forbiddenLabel);
      if (bad.length) throw this.refuse(request, `node ${n} is not allowed to set the following labels: ${bad.join(', ')}`);
    }
    if (request.operation === 'UPDATE') {
      const next = spec(request.object);
      const prev = spec(request.oldObject);
      if (next.configSource && !same(next.configSource, prev.configSource)) throw this.refuse(request, `node ${n} is not allowed to update configSource to a new non-nil configSource`);
      if (!same(next.taints, prev.taints)) throw this.refuse(request, `node ${n} is not allowed to modify taints`);
      const bad = modifiedLabels(meta(request.object).labels, meta(request.oldObject).labels).filter(forbiddenLabel);
      if (bad.length) throw this.refuse(request, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  }

  private pvc(node: string, request: AdmissionRequest): void {
    if (request.subresource !== 'status') throw this.refuse(request, 'may only update PVC status');
    if (request.operation !== 'UPDATE') throw this.refuse(request, `unexpected operation ${JSON.stringify(request.operation)}`);
    const strip = (obj?: JsonObject) => {
      const { resourceVersion: _rv, managedFields: _mf, ...metadata } = meta(obj);
      const { capacity: _c, conditions: _co, allocatedResources: _ar, allocatedResourceStatuses: _ars, ...status } = (obj?.status ?? {}) as Json;
      return { ...obj, metadata, status };
    };
    if (!same(strip(request.object), strip(request.oldObject))) {
      throw this.refuse(request, `node ${JSON.stringify(node)} is not allowed to update fields other than status.capacity and status.conditions`);
    }
  }

  private async serviceAccount(node: string, request: AdmissionRequest): Promise<void> {
    if (request.operation !== 'CREATE' || request.subresource !== 'token') return;
    const ref = spec(request.object).boundObjectRef as Json | undefined;
    if (!ref) throw this.refuse(request, 'node requested token not bound to a pod');
    if (ref.kind !== 'Pod') throw this.refuse(request, `node requested token bound to a ${ref.kind}, only pods are allowed`);
    if (!ref.uid) throw this.refuse(request, 'node requested token with a pod binding without a uid');
    const pod = await this.read(objectKey('', 'pods', request.namespace, String(ref.name ?? '')));
    if (!pod) throw notFound({ group: '', resource: 'pods' }, String(ref.name ?? ''));
    if (ref.uid !== meta(pod).uid) throw this.refuse(request, 'the UID of the pod this token is bound to does not match the UID in the token request');
    if (spec(pod).nodeName !== node) throw this.refuse(request, 'node requested token bound to a pod scheduled on a different node');
  }

  private sameName(node: string, request: AdmissionRequest, detail: string): void {
    if (request.operation === 'CREATE' && (request.name || meta(request.object).name) !== node) throw this.refuse(request, detail);
  }

  private async read(key: string): Promise<Json | undefined> {
    const response = await this.store.get(key).catch((err: unknown) => {
      if (isServiceError(err) && err.code === grpc.status.NOT_FOUND) return undefined;
      throw err;
    });
    if (!response?.kv) return undefined;
    return JSON.parse(response.kv.value.toString('utf8')) as Json;
  }
}
