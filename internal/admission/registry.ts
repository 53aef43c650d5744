// The admission plugins this server knows, in the order they run, and the
// selection by --enable-admission-plugins / --disable-admission-plugins.
import type { AdmissionPlugin } from './types.js';
import { NAMESPACE_LIFECYCLE, NamespaceLifecycle } from './plugins/namespace-lifecycle.js';
import type { NamespaceCache, NamespaceStore } from './namespaces.js';
import { NODE_RESTRICTION, NodeRestriction } from './plugins/node-restriction.js';
import type { Registry as Metrics } from 'prom-client';
import type { StorageClient } from '../storage/client.js';
import { MUTATING_ADMISSION_WEBHOOK, VALIDATING_ADMISSION_WEBHOOK, mutatingWebhooks, validatingWebhooks } from './webhooks/index.js';
import type { Authorize } from './authz-client.js';
import { CERTIFICATE_APPROVAL, certificateApproval } from './plugins/certificate-approval.js';
import { CERTIFICATE_SIGNING, certificateSigning } from './plugins/certificate-signing.js';
import { CERTIFICATE_SUBJECT_RESTRICTION, CertificateSubjectRestriction } from './plugins/certificate-subjectrestriction.js';
import { ALWAYS_ADMIT, AlwaysAdmit } from './plugins/alwaysadmit.js';
import { ALWAYS_DENY, AlwaysDeny } from './plugins/alwaysdeny.js';
import { ALWAYS_PULL_IMAGES, alwaysPullImages } from './plugins/alwayspullimages.js';
import { DEFAULT_INGRESS_CLASS, DefaultIngressClass } from './plugins/defaultingressclass.js';
import { DEFAULT_STORAGE_CLASS, DefaultStorageClass } from './plugins/defaultstorageclass.js';
import { DENY_SERVICE_EXTERNAL_IPS, DenyServiceExternalIPs } from './plugins/denyserviceexternalips.js';
import { NAMESPACE_AUTO_PROVISION, NamespaceAutoProvision } from './plugins/namespaceautoprovision.js';
import { NAMESPACE_EXISTS, NamespaceExists } from './plugins/namespaceexists.js';
import { PERSISTENT_VOLUME_CLAIM_RESIZE, PersistentVolumeClaimResize } from './plugins/pvcresize.js';
import { STORAGE_OBJECT_IN_USE_PROTECTION, StorageObjectInUseProtection } from './plugins/storageobjectinuseprotection.js';
import { TAINT_NODES_BY_CONDITION, TaintNodesByCondition } from './plugins/taintnodesbycondition.js';
import { POD_SECURITY, podSecurityPlugin } from './plugins/podsecurity.js';
import { RESOURCE_QUOTA, ResourceQuota } from './plugins/resourcequota.js';
import { limitedResources } from './plugins/resourcequota-config.js';
import { LIMIT_RANGER, LimitRangerBounds, LimitRangerDefaults, limitRangeCache } from './plugins/limitranger.js';
import { SERVICE_ACCOUNT, ServiceAccountChecks, ServiceAccountDefaults, serviceAccountCache } from './plugins/serviceaccount.js';
import { PRIORITY, Priority, PriorityClassGuard, priorityClassCache } from './plugins/priority.js';
import { DEFAULT_TOLERATION_SECONDS, DefaultTolerationSeconds, type TolerationSeconds } from './plugins/defaulttolerationseconds.js';
import { RUNTIME_CLASS, RuntimeClassDefaults, RuntimeClassOverhead, runtimeClassCache } from './plugins/runtimeclass.js';
import type { FeatureGates } from '../config/features.js';
import { MutatingPolicyMetrics, PolicyMetrics } from './policies/metrics.js';
import { VALIDATING_ADMISSION_POLICY, ValidatingAdmissionPolicyPlugin } from './policies/validating.js';
import { inertMutatingAdmissionPolicy, MUTATING_ADMISSION_POLICY, MutatingAdmissionPolicyPlugin } from './policies/mutating.js';

/** What plugins may need to build themselves. */
export interface PluginContext {
  store: NamespaceStore;
  namespaces: NamespaceCache;
  /** The plugin's configuration from --admission-control-config-file, undefined when it has none. */
  pluginConfig(name: string): unknown;
  /** The full storage client, for Reflectors over the kinds a plugin reads. */
  storage: StorageClient;
  /** Where plugins register their metrics (absent: not measured). */
  metrics?: Metrics;
  /** The authorization service's decision on a request of a user. */
  authorize: Authorize;
  /** --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
  tolerationSeconds: TolerationSeconds;
  /** Feature gates of the admission process. */
  gates: FeatureGates;
}

interface Registration {
  name: string;
  enabledByDefault: boolean;
  /** One plugin object per phase: a plugin that both mutates and validates answers two. */
  create(context: PluginContext): AdmissionPlugin | AdmissionPlugin[];
}

/** Every known plugin, in run order (the order of the flags does not matter). */
export const ADMISSION_PLUGINS: Registration[] = [
  { name: ALWAYS_ADMIT, enabledByDefault: false, create: () => new AlwaysAdmit() },
  { name: NAMESPACE_AUTO_PROVISION, enabledByDefault: false, create: (ctx) => new NamespaceAutoProvision(ctx.namespaces, ctx.storage) },
  { name: NAMESPACE_LIFECYCLE, enabledByDefault: true, create: (ctx) => new NamespaceLifecycle(ctx.namespaces) },
  { name: NAMESPACE_EXISTS, enabledByDefault: false, create: (ctx) => new NamespaceExists(ctx.namespaces) },
  {
    name: LIMIT_RANGER, enabledByDefault: true,
    create: (ctx) => { const ranges = limitRangeCache(ctx.storage).start(); return [new LimitRangerDefaults(ranges), new LimitRangerBounds(ranges)]; },
  },
  {
    name: SERVICE_ACCOUNT, enabledByDefault: true,
    create: (ctx) => { const accounts = serviceAccountCache(ctx.storage).start(); return [new ServiceAccountDefaults(accounts), new ServiceAccountChecks(accounts)]; },
  },
  { name: NODE_RESTRICTION, enabledByDefault: false, create: (ctx) => new NodeRestriction(ctx.store) },
  { name: TAINT_NODES_BY_CONDITION, enabledByDefault: true, create: () => new TaintNodesByCondition() },
  { name: ALWAYS_PULL_IMAGES, enabledByDefault: false, create: alwaysPullImages },
  {
    name: POD_SECURITY, enabledByDefault: true,
    create: (ctx) => podSecurityPlugin(ctx.pluginConfig(POD_SECURITY), ctx.namespaces, ctx.storage, ctx.metrics),
  },
  {
    name: PRIORITY, enabledByDefault: true,
    create: (ctx) => { const classes = priorityClassCache(ctx.storage).start(); return [new Priority(classes), new PriorityClassGuard(classes)]; },
  },
  { name: DEFAULT_TOLERATION_SECONDS, enabledByDefault: true, create: (ctx) => new DefaultTolerationSeconds(ctx.tolerationSeconds) },
  { name: DEFAULT_STORAGE_CLASS, enabledByDefault: true, create: (ctx) => new DefaultStorageClass(ctx.storage) },
  { name: STORAGE_OBJECT_IN_USE_PROTECTION, enabledByDefault: true, create: () => new StorageObjectInUseProtection() },
  { name: PERSISTENT_VOLUME_CLAIM_RESIZE, enabledByDefault: true, create: (ctx) => new PersistentVolumeClaimResize(ctx.storage) },
  {
    name: RUNTIME_CLASS, enabledByDefault: true,
    create: (ctx) => { const classes = runtimeClassCache(ctx.storage).start(); return [new RuntimeClassDefaults(classes), new RuntimeClassOverhead(classes)]; },
  },
  { name: CERTIFICATE_APPROVAL, enabledByDefault: true, create: (ctx) => certificateApproval(ctx.authorize) },
  { name: CERTIFICATE_SIGNING, enabledByDefault: true, create: (ctx) => certificateSigning(ctx.authorize) },
  { name: CERTIFICATE_SUBJECT_RESTRICTION, enabledByDefault: true, create: () => new CertificateSubjectRestriction() },
  { name: DEFAULT_INGRESS_CLASS, enabledByDefault: true, create: (ctx) => new DefaultIngressClass(ctx.storage) },
  { name: DENY_SERVICE_EXTERNAL_IPS, enabledByDefault: false, create: () => new DenyServiceExternalIPs() },
  {
    // Enabled, but inert unless its feature gate is on.
    name: MUTATING_ADMISSION_POLICY, enabledByDefault: true,
    create: (ctx) => (ctx.gates('MutatingAdmissionPolicy')
      ? new MutatingAdmissionPolicyPlugin(ctx.storage, ctx.namespaces, ctx.authorize, ctx.metrics && new MutatingPolicyMetrics(ctx.metrics)) : inertMutatingAdmissionPolicy),
  },
  { name: MUTATING_ADMISSION_WEBHOOK, enabledByDefault: true, create: mutatingWebhooks },
  {
    name: VALIDATING_ADMISSION_POLICY, enabledByDefault: true,
    create: (ctx) => new ValidatingAdmissionPolicyPlugin(ctx.storage, ctx.namespaces, ctx.authorize, ctx.metrics && new PolicyMetrics(ctx.metrics)),
  },
  { name: VALIDATING_ADMISSION_WEBHOOK, enabledByDefault: true, create: validatingWebhooks },
  { name: RESOURCE_QUOTA, enabledByDefault: true, create: (ctx) => new ResourceQuota(ctx.storage, limitedResources(ctx.pluginConfig(RESOURCE_QUOTA))) },
  { name: ALWAYS_DENY, enabledByDefault: false, create: () => new AlwaysDeny() },
];

/** Plugins the authorization modes call for: NodeRestriction goes with the Node authorizer. */
export function impliedPlugins(authorizationModes: string[]): string[] {
  return authorizationModes.includes('Node') ? [NODE_RESTRICTION] : [];
}

/** A plugin selection the service cannot start with. */
export class AdmissionConfigError extends Error {}

/** The names of the enabled plugins, in run order; unknown or contradicting names throw. */
export function enabledPluginNames(enable: string[], disable: string[]): string[] {
  const known = new Set(ADMISSION_PLUGINS.map((p) => p.name));
  const errors = [
    ...enable.filter((n) => !known.has(n)).map((n) => `enable-admission-plugins plugin "${n}" is unknown`),
    ...disable.filter((n) => !known.has(n)).map((n) => `disable-admission-plugins plugin "${n}" is unknown`),
  ];
  const both = [...new Set(enable.filter((n) => disable.includes(n)))].sort();
  if (both.length) errors.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  if (errors.length) throw new AdmissionConfigError(errors.join('; '));
  return ADMISSION_PLUGINS
    .filter((p) => (p.enabledByDefault || enable.includes(p.name)) && !disable.includes(p.name))
    .map((p) => p.name);
}

/** The enabled plugins, built. */
export function buildPlugins(enable: string[], disable: string[], context: PluginContext): AdmissionPlugin[] {
  const names = enabledPluginNames(enable, disable);
  return ADMISSION_PLUGINS.filter((p) => names.includes(p.name)).flatMap((p) => p.create(context));
}
