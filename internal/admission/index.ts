// The admission service: plugins, their chain and the RPC handler.
export * from './types.js';
export { AdmissionChain, type AdmissionOutcome } from './chain.js';
export { forbidden, notFound, internalError, qualifiedResource, type GroupResource } from './errors.js';
export { ADMISSION_PLUGINS, AdmissionConfigError, buildPlugins, enabledPluginNames, impliedPlugins, type PluginContext } from './registry.js';
export { NodeRestriction, NODE_RESTRICTION } from './plugins/node-restriction.js';
export { PodSecurity, POD_SECURITY, podSecurityPlugin } from './plugins/podsecurity.js';
export { NAMESPACE_POD_CHECK, namespacePodWarnings, type PodLister } from './plugins/podsecurity-namespace.js';
export { ResourceQuota, RESOURCE_QUOTA, type LimitedResource } from './plugins/resourcequota.js';
export { NamespaceLifecycle, NAMESPACE_LIFECYCLE, IMMORTAL_NAMESPACES } from './plugins/namespace-lifecycle.js';
export { AdmissionConfiguration, AdmissionFileError, ADMISSION_CONFIG_VERSIONS, decodeAdmissionConfiguration, loadAdmissionConfiguration } from './config.js';
export { FORCE_LIVE_LOOKUP_MS, NamespaceCache, type NamespaceState, type NamespaceStore } from './namespaces.js';
export { ADMISSION_SERVICE_NAME, admissionRequestOf, admissionService, admitHandler } from './service.js';
export { AuthzClient, type Authorize, type AuthorizeAttributes, type AuthorizeDecision } from './authz-client.js';
