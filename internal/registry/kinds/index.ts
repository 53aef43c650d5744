// Every kind declaration, by group: what the resource table does not say.
import { group } from '../../names/index.js';
import type { KindSpec } from '../define.js';
import { admissionregistrationKinds } from './admissionregistration.js';
import { appsKinds } from './apps.js';
import { autoscalingKinds } from './autoscaling.js';
import { batchKinds } from './batch.js';
import { certificatesKinds } from './certificates.js';
import { coordinationKinds } from './coordination.js';
import { coreKinds } from './core.js';
import { coreServiceKinds } from './core-services.js';
import { coreStorageKinds } from './core-storage.js';
import { coreWorkloadKinds } from './core-workloads.js';
import { discoveryKinds } from './discovery.js';
import { eventsKinds } from './events.js';
import { apiextensionsKinds, apiregistrationKinds } from './extensions.js';
import { flowcontrolKinds } from './flowcontrol.js';
import { networkingKinds } from './networking.js';
import { policyKinds } from './policy.js';
import { rbacKinds } from './rbac.js';
import { resourceKinds } from './resource.js';
import { authenticationKinds, authorizationKinds } from './reviews.js';
import { nodeKinds, schedulingKinds } from './scheduling-node.js';
import { storageKinds } from './storage.js';

/** Declarations by group, keyed by resource, or by `version/resource` where versions differ. */
const BY_GROUP: Record<string, Record<string, KindSpec>> = {
  '': { ...coreKinds, ...coreWorkloadKinds, ...coreServiceKinds, ...coreStorageKinds },
  apps: appsKinds,
  batch: batchKinds,
  autoscaling: autoscalingKinds,
  policy: policyKinds,
  [group('networking')]: networkingKinds,
  [group('storage')]: storageKinds,
  [group('coordination')]: coordinationKinds,
  [group('events')]: eventsKinds,
  [group('discovery')]: discoveryKinds,
  [group('scheduling')]: schedulingKinds,
  [group('node')]: nodeKinds,
  [group('certificates')]: certificatesKinds,
  [group('flowcontrol.apiserver')]: flowcontrolKinds,
  [group('rbac.authorization')]: rbacKinds,
  [group('admissionregistration')]: admissionregistrationKinds,
  [group('apiextensions')]: apiextensionsKinds,
  [group('apiregistration')]: apiregistrationKinds,
  [group('authentication')]: authenticationKinds,
  [group('authorization')]: authorizationKinds,
  [group('resource')]: resourceKinds,
};

export function kindSpecFor(groupName: string, version: string, resource: string): KindSpec | undefined {
  const specs = BY_GROUP[groupName];
  return specs?.[`${version}/${resource}`] ?? specs?.[resource];
}
