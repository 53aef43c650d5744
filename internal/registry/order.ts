// Discovery order: groups as the upstream server lists them (clients resolving
// an ambiguous resource name take the first), versions stable first, newest first.
import { group } from '../names/index.js';

export const GROUP_ORDER = [
  '', group('apiregistration'), 'apps', group('events'), group('authentication'), group('authorization'), 'autoscaling', 'batch',
  group('certificates'), group('networking'), 'policy', group('rbac.authorization'), group('storage'), group('admissionregistration'),
  group('apiextensions'), group('scheduling'), group('coordination'), group('node'), group('discovery'), group('flowcontrol.apiserver'),
  group('resource'), group('internal.apiserver'), group('storagemigration'),
];

const VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Larger is preferred: v2 > v1 > v1beta2 > v1beta1 > v1alpha1. */
export function versionPriority(version: string): number {
  const m = VERSION.exec(version);
  if (!m) return 0;
  const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
  return stage * 1_000_000 + Number(m[1]) * 1000 + Number(m[3] ?? 0);
}
