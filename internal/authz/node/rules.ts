// What every node may do beyond the objects the graph relates to it: upstream's
// node rules (the system:node role), consulted for the resources the node
// authorizer does not subdivide.
import { group } from '../../names/index.js';
import type { ResourceAttributes } from '../types.js';

interface Rule {
  verbs: string[];
  groups: string[];
  resources: string[];
}

const READ = ['get', 'list', 'watch'];
const READ_WRITE = [...READ, 'create', 'update', 'patch', 'delete', 'deletecollection'];
const rule = (verbs: string[], groups: string[], resources: string[]): Rule => ({ verbs, groups, resources });

export const NODE_RULES: readonly Rule[] = [
  rule(['create'], [group('authentication')], ['tokenreviews']),
  rule(['create'], [group('authorization')], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  rule(READ, [''], ['services']),
  rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  rule(['update', 'patch'], [''], ['nodes/status']),
  rule(['update', 'patch'], [''], ['nodes']),
  rule(['create', 'update', 'patch'], [''], ['events']),
  rule(READ, [''], ['pods']),
  rule(['create', 'delete'], [''], ['pods']),
  rule(['update', 'patch'], [''], ['pods/status']),
  rule(['create'], [''], ['pods/eviction']),
  rule(['get', 'list', 'watch'], [''], ['secrets', 'configmaps']),
  rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], [''], ['endpoints']),
  rule(['create', 'get', 'list', 'watch'], [group('certificates')], ['certificatesigningrequests']),
  rule(['get', 'create', 'update', 'patch', 'delete'], [group('coordination')], ['leases']),
  rule(['get'], [group('storage')], ['volumeattachments']),
  rule(['create'], [''], ['serviceaccounts/token']),
  rule(['get', 'update', 'patch'], [''], ['persistentvolumeclaims/status']),
  rule(['get', 'watch', 'list'], [group('storage')], ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], [group('storage')], ['csinodes']),
  rule(READ, [group('node')], ['runtimeclasses']),
  rule(['get'], [group('resource')], ['resourceclaims']),
  rule(READ_WRITE, [group('resource')], ['resourceslices']),
];

/** Whether a rule of the list allows the request. */
export function rulesAllow(request: ResourceAttributes, rules: readonly Rule[] = NODE_RULES): boolean {
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  return rules.some((r) => r.verbs.includes(request.verb) && r.groups.includes(request.group) && r.resources.includes(resource));
}
