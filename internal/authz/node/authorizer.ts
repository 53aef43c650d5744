// The Node authorizer: a node's kubelet (`system:node:<name>` in `system:nodes`)
// may read the objects the graph relates to its node (pods bound to it and what
// they use), its own Node, its Lease and CSINode, and what every node may do by
// upstream's node rules; everything else has no opinion. Creates and status
// writes pass here and are narrowed by the NodeRestriction admission plugin.
import { GROUP_NODES, NAMESPACE_NODE_LEASE, group } from '../../names/index.js';
import { fieldRequirements } from '../attributes.js';
import { forAnyName, verdict, type Attributes, type Authorizer, type ResourceAttributes, type RuleLister, type RulesAnswer, type UserInfo, type Verdict } from '../types.js';
import { vertex, type NodeGraph, type VertexType } from './graph.js';
import { rulesAllow } from './rules.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = GROUP_NODES;

/** The node a user speaks for: undefined when not a node, '' when a node of no name. */
export function nodeIdentity(user: { username: string; groups: string[] }): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}

const allow = (): Verdict => verdict('ALLOW', '', undefined, 'policy');
const none = (reason = ''): Verdict => verdict('NO_OPINION', reason, undefined, 'policy');

type Handler = (node: string, r: ResourceAttributes, attributes: Attributes) => Verdict;

export class NodeAuthorizer implements Authorizer, RuleLister {
  private readonly handlers: Record<string, Handler> = {
    '/secrets': (n, r) => this.readNamespaced(n, 'secret', r),
    '/configmaps': (n, r) => this.readNamespaced(n, 'configmap', r),
    '/persistentvolumeclaims': (n, r) => (r.subresource === 'status' ? this.statusUpdate(n, 'pvc', r) : this.get(n, 'pvc', r)),
    '/persistentvolumes': (n, r) => this.get(n, 'pv', r),
    [`${group('resource')}/resourceclaims`]: (n, r) => this.get(n, 'resourceclaim', r),
    [`${group('storage')}/volumeattachments`]: (n, r) => this.get(n, 'volumeattachment', r),
    '/serviceaccounts': (n, r) => this.createToken(n, r),
    [`${group('coordination')}/leases`]: (n, r) => this.lease(n, r),
    [`${group('storage')}/csinodes`]: (n, r) => this.csiNode(n, r),
    [`${group('resource')}/resourceslices`]: (n, r, a) => this.resourceSlice(n, r, a),
    '/nodes': (n, r) => this.node(n, r),
    '/pods': (n, r, a) => this.pod(n, r, a),
  };

  constructor(private readonly graph: NodeGraph) {}

  /** Nodes' permissions depend on the graph and are not enumerated; other users get none here. */
  async rulesFor(user: UserInfo): Promise<RulesAnswer> {
    const isNode = nodeIdentity(user) !== undefined;
    return { resourceRules: [], nonResourceRules: [], incomplete: isNode, ...(isNode ? { error: 'node authorizer does not support user rule resolution' } : {}) };
  }

  async authorize(attributes: Attributes): Promise<Verdict> {
    const node = nodeIdentity(attributes.user);
    if (node === undefined) return forAnyName(verdict('NO_OPINION', '', undefined, 'process'));
    if (!node) return none(`unknown node for user ${JSON.stringify(attributes.user.username)}`);
    const r = attributes.resource;
    if (!r) return none();
    const handler = this.handlers[`${r.group}/${r.resource}`];
    if (handler) return handler(node, r, attributes);
    return rulesAllow(r) ? allow() : none();
  }

  private related(node: string, type: VertexType, r: ResourceAttributes): Verdict {
    if (!r.name) return none('No Object name found');
    return this.graph.hasPath(vertex(type, r.namespace, r.name), node) ? allow()
      : none(`no relationship found between node '${node}' and this object`);
  }

  private readNamespaced(node: string, type: VertexType, r: ResourceAttributes): Verdict {
    if (!['get', 'list', 'watch'].includes(r.verb)) return none('can only read resources of this type');
    if (r.subresource) return none('cannot read subresource');
    if (!r.namespace) return none('can only read namespaced object of this type');
    return this.related(node, type, r);
  }

  private get(node: string, type: VertexType, r: ResourceAttributes): Verdict {
    if (r.verb !== 'get') return none('can only get individual resources of this type');
    if (r.subresource) return none('cannot get subresource');
    return this.related(node, type, r);
  }

  private statusUpdate(node: string, type: VertexType, r: ResourceAttributes): Verdict {
    if (r.verb !== 'update' && r.verb !== 'patch') return none('can only get/update/patch this type');
    return this.related(node, type, r);
  }

  private createToken(node: string, r: ResourceAttributes): Verdict {
    if (r.verb !== 'create' || !r.name) return none('can only create tokens for individual service accounts');
    if (r.subresource !== 'token') return none('can only create token subresource of serviceaccount');
    return this.related(node, 'serviceaccount', r);
  }

  private lease(node: string, r: ResourceAttributes): Verdict {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(r.verb)) return none('can only get, create, update, patch, or delete a node lease');
    if (r.namespace !== NAMESPACE_NODE_LEASE) return none(`can only access leases in the ${JSON.stringify(NAMESPACE_NODE_LEASE)} system namespace`);
    // The name of a create is not known here; NodeRestriction checks it.
    if (r.verb !== 'create' && r.name !== node) return none('can only access node lease with the same name as the requesting node');
    return allow();
  }

  private csiNode(node: string, r: ResourceAttributes): Verdict {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(r.verb)) return none('can only get, create, update, patch, or delete a CSINode');
    if (r.subresource) return none('cannot authorize CSINode subresources');
    if (r.verb !== 'create' && r.name !== node) return none('can only access CSINode with the same name as the requesting node');
    return allow();
  }

  private resourceSlice(node: string, r: ResourceAttributes, attributes: Attributes): Verdict {
    if (r.subresource) return none('cannot authorize ResourceSlice subresources');
    switch (r.verb) {
      case 'create': return allow();
      case 'get': case 'update': case 'patch': case 'delete': return this.related(node, 'resourceslice', r);
      case 'list': case 'watch': case 'deletecollection':
        return selects(attributes, 'nodeName', node) ? allow()
          : none('can only list/watch/deletecollection resourceslices with nodeName field selector');
      default:
        return none('only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection');
    }
  }

  private node(node: string, r: ResourceAttributes): Verdict {
    if (!r.subresource && ['create', 'update', 'patch'].includes(r.verb)) return allow();
    if (!r.subresource && ['get', 'list', 'watch'].includes(r.verb)) {
      // By name, not through the graph: a node reads its Node before registering it.
      if (r.name === node) return allow();
      return none(r.name ? `node '${node}' cannot read '${r.name}', only its own Node object`
        : `node '${node}' cannot read all nodes, only its own Node object`);
    }
    if (r.subresource === 'status' && (r.verb === 'update' || r.verb === 'patch')) return allow();
    return none();
  }

  private pod(node: string, r: ResourceAttributes, attributes: Attributes): Verdict {
    if (!r.subresource) {
      if (r.verb === 'get') return this.get(node, 'pod', r);
      if (r.verb === 'list' || r.verb === 'watch') {
        if (selects(attributes, 'spec.nodeName', node)) return allow();
        if (r.name) return this.related(node, 'pod', r);
        return none('can only list/watch pods with spec.nodeName field selector');
      }
      // Mirror pods; NodeRestriction keeps them to the node's own.
      if (r.verb === 'create' || r.verb === 'delete') return allow();
    }
    if (r.subresource === 'status' && (r.verb === 'update' || r.verb === 'patch')) return allow();
    if (r.subresource === 'eviction' && r.verb === 'create') return allow();
    return none();
  }
}

/** Whether the request's field selector requires `field=value`. */
function selects(attributes: Attributes, field: string, value: string): boolean {
  return (fieldRequirements(attributes) ?? []).some((q) => q.key === field && q.operator === 'In' && q.values?.length === 1 && q.values[0] === value);
}
