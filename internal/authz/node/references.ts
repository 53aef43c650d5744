// The edges a stored object adds to the node graph: what a pod bound to a node
// uses (secrets, config maps, its service account, claims), what a persistent
// volume is bound to and the secrets it needs, and the node of a volume
// attachment or resource slice.
import { vertex, type Edge } from './graph.js';

type Json = Record<string, any>;

const names = (values: unknown[]): string[] => values.filter((v): v is string => typeof v === 'string' && v !== '');
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter((v) => v && typeof v === 'object') : []);

/** The volume sources whose secret sits in `secretRef.name`. */
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos'];
const CSI_SECRET_REFS = ['nodePublishSecretRef', 'nodeStageSecretRef', 'controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodeExpandSecretRef'];

function containers(spec: Json): Json[] {
  return [...list(spec.containers), ...list(spec.initContainers), ...list(spec.ephemeralContainers)];
}

/** Every secret a pod names: pull secrets, env, volumes. */
export function podSecrets(spec: Json): string[] {
  const fromContainers = containers(spec).flatMap((c) => [
    ...list(c.env).map((e) => e.valueFrom?.secretKeyRef?.name),
    ...list(c.envFrom).map((e) => e.secretRef?.name),
  ]);
  const fromVolumes = list(spec.volumes).flatMap((v) => [
    v.secret?.secretName, v.azureFile?.secretName, v.csi?.nodePublishSecretRef?.name,
    ...SECRET_REF_SOURCES.map((s) => v[s]?.secretRef?.name),
    ...list(v.projected?.sources).map((s) => s.secret?.name),
  ]);
  return [...new Set(names([...list(spec.imagePullSecrets).map((s) => s.name), ...fromContainers, ...fromVolumes]))];
}

/** Every config map a pod names: env and volumes. */
export function podConfigMaps(spec: Json): string[] {
  const fromContainers = containers(spec).flatMap((c) => [
    ...list(c.env).map((e) => e.valueFrom?.configMapKeyRef?.name),
    ...list(c.envFrom).map((e) => e.configMapRef?.name),
  ]);
  const fromVolumes = list(spec.volumes).flatMap((v) => [v.configMap?.name, ...list(v.projected?.sources).map((s) => s.configMap?.name)]);
  return [...new Set(names([...fromContainers, ...fromVolumes]))];
}

/** The claims of a pod's volumes, generic ephemeral volumes named `<pod>-<volume>`. */
export function podClaims(podName: string, spec: Json): string[] {
  return [...new Set(names(list(spec.volumes).map((v) =>
    v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${podName}-${v.name}` : undefined))))];
}

/** The resource claims a pod uses, named in its spec or allocated in its status. */
export function podResourceClaims(pod: Json): string[] {
  return [...new Set(names([
    ...list(pod.spec?.resourceClaims).map((c) => c.resourceClaimName),
    ...list(pod.status?.resourceClaimStatuses).map((c) => c.resourceClaimName),
    pod.status?.extendedResourceClaimStatus?.resourceClaimName,
  ]))];
}

/** A pod bound to a node: the pod leads to the node, everything it uses to the pod. */
export function podEdges(pod: Json): Edge[] {
  const nodeName = pod.spec?.nodeName;
  const namespace = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  if (typeof nodeName !== 'string' || !nodeName || !name) return [];
  const podVertex = vertex('pod', namespace, name);
  const spec = pod.spec as Json;
  const to = (type: Parameters<typeof vertex>[0]) => (n: string): Edge => ({ from: vertex(type, namespace, n), to: podVertex });
  return [
    { from: podVertex, to: vertex('node', '', nodeName) },
    ...podSecrets(spec).map(to('secret')),
    ...podConfigMaps(spec).map(to('configmap')),
    ...names([spec.serviceAccountName]).map(to('serviceaccount')),
    ...podClaims(name, spec).map(to('pvc')),
    ...podResourceClaims(pod).map(to('resourceclaim')),
  ];
}

/** A bound persistent volume leads to its claim; the secrets it needs lead to it. */
export function pvEdges(pv: Json): Edge[] {
  const name = pv.metadata?.name ?? '';
  const spec = (pv.spec ?? {}) as Json;
  const pvVertex = vertex('pv', '', name);
  const claim = spec.claimRef;
  const edges: Edge[] = claim?.name ? [{ from: pvVertex, to: vertex('pvc', claim.namespace ?? '', claim.name) }] : [];
  const secretRefs: Array<{ name?: string; namespace?: string } | undefined> = [
    ...SECRET_REF_SOURCES.map((s) => spec[s]?.secretRef),
    ...CSI_SECRET_REFS.map((r) => spec.csi?.[r]),
  ];
  if (spec.azureFile?.secretName) secretRefs.push({ name: spec.azureFile.secretName, namespace: spec.azureFile.secretNamespace ?? claim?.namespace });
  for (const ref of secretRefs) {
    if (ref?.name) edges.push({ from: vertex('secret', ref.namespace ?? claim?.namespace ?? '', ref.name), to: pvVertex });
  }
  return edges;
}

/** An object that names its node in `spec.nodeName` (volume attachments, resource slices). */
export function nodeNamedEdges(type: 'volumeattachment' | 'resourceslice', obj: Json): Edge[] {
  const nodeName = obj.spec?.nodeName;
  const name = obj.metadata?.name;
  if (typeof nodeName !== 'string' || !nodeName || !name) return [];
  return [{ from: vertex(type, '', name), to: vertex('node', '', nodeName) }];
}
