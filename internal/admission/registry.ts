// The admission plugins this server knows, in the order they run, and the
// selection by --enable-admission-plugins / --disable-admission-plugins.
import type { AdmissionPlugin } from './types.js';
import { NAMESPACE_LIFECYCLE, NamespaceLifecycle } from './plugins/namespace-lifecycle.js';
import type { NamespaceCache, NamespaceStore } from './namespaces.js';
import { NODE_RESTRICTION, NodeRestriction } from './plugins/node-restriction.js';
import type { StorageClient } from '../storage/client.js';
import { LIMIT_RANGER, LimitRangerBounds, LimitRangerDefaults, limitRangeCache } from './plugins/limitranger.js';
import { SERVICE_ACCOUNT, ServiceAccountChecks, ServiceAccountDefaults, serviceAccountCache } from './plugins/serviceaccount.js';
import { PRIORITY, Priority, PriorityClassGuard, priorityClassCache } from './plugins/priority.js';
import { DEFAULT_TOLERATION_SECONDS, DefaultTolerationSeconds, type TolerationSeconds } from './plugins/defaulttolerationseconds.js';
import { RUNTIME_CLASS, RuntimeClassDefaults, RuntimeClassOverhead, runtimeClassCache } from './plugins/runtimeclass.js';

/** What plugins may need to build themselves. */
export interface PluginContext {
  store: NamespaceStore;
  namespaces: NamespaceCache;
  /** The full storage client, for the Reflectors of the kinds plugins decide from. */
  storage: StorageClient;
  /** --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
  tolerationSeconds: TolerationSeconds;
}

interface Registration {
  name: string;
  enabledByDefault: boolean;
  /** One plugin object per phase: a plugin that both mutates and validates answers two. */
  create(context: PluginContext): AdmissionPlugin | AdmissionPlugin[];
}

/** Every known plugin, in run order (the order of the flags does not matter). */
export const ADMISSION_PLUGINS: Registration[] = [
  { name: NAMESPACE_LIFECYCLE, enabledByDefault: true, create: (ctx) => new NamespaceLifecycle(ctx.namespaces) },
  {
    name: LIMIT_RANGER, enabledByDefault: true,
    create: (ctx) => { const ranges = limitRangeCache(ctx.storage).start(); return [new LimitRangerDefaults(ranges), new LimitRangerBounds(ranges)]; },
  },
  {
    name: SERVICE_ACCOUNT, enabledByDefault: true,
    create: (ctx) => { const accounts = serviceAccountCache(ctx.storage).start(); return [new ServiceAccountDefaults(accounts), new ServiceAccountChecks(accounts)]; },
  },
  { name: NODE_RESTRICTION, enabledByDefault: false, create: (ctx) => new NodeRestriction(ctx.store) },
  {
    name: PRIORITY, enabledByDefault: true,
    create: (ctx) => { const classes = priorityClassCache(ctx.storage).start(); return [new Priority(classes), new PriorityClassGuard(classes)]; },
  },
  { name: DEFAULT_TOLERATION_SECONDS, enabledByDefault: true, create: (ctx) => new DefaultTolerationSeconds(ctx.tolerationSeconds) },
  {
    name: RUNTIME_CLASS, enabledByDefault: true,
    create: (ctx) => { const classes = runtimeClassCache(ctx.storage).start(); return [new RuntimeClassDefaults(classes), new RuntimeClassOverhead(classes)]; },
  },
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
