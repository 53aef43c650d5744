// Service usage: the count, and the node ports and load balancers it takes.
import { count, ZERO, type ResourceList } from './quantity.js';
import { objectCountName } from './objectcount.js';
import type { Evaluator, Obj } from './types.js';

const NAMES = [objectCountName('', 'services'), 'services', 'services.nodeports', 'services.loadbalancers'];

function nodePorts(spec: Obj): number {
  const ports: Obj[] = Array.isArray(spec.ports) ? spec.ports : [];
  // A load balancer told not to allocate node ports takes only the ones it names.
  if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === false) return ports.filter((p) => p.nodePort).length;
  return ports.length;
}

export const serviceEvaluator: Evaluator = {
  group: '',
  resource: 'services',
  handles: (operation, subresource) => subresource === '' && (operation === 'CREATE' || operation === 'UPDATE'),
  matchingResources: (input) => input.filter((n) => NAMES.includes(n)),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(svc): ResourceList {
    const spec = (svc.spec ?? {}) as Obj;
    const takesPorts = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    return {
      [NAMES[0]]: count(1),
      services: count(1),
      'services.nodeports': takesPorts ? count(nodePorts(spec)) : ZERO,
      'services.loadbalancers': spec.type === 'LoadBalancer' ? count(1) : ZERO,
    };
  },
};
