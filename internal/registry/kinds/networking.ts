// The networking group (v1): NetworkPolicy (every rule of document 3), Ingress,
// IngressClass, IPAddress, ServiceCIDR.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn, selectorText } from '../columns.js';
import {
  dns1123Subdomain, forbidden, invalid, notSupported, oneOf, portName, portNumber, required, tooLong, unchanged, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { isIP, parseCidr, strictlyContains } from '../net.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, objects, setDefault, str, specOf, type Obj } from '../values.js';

const statusOf = (o: ApiObject | undefined): Obj => asObj(o?.status) ?? {};
const POLICY_TYPES = ['Ingress', 'Egress'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const CIDR_DETAIL = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

// ---- NetworkPolicy ----

function defaultNetworkPolicy(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  for (const list of ['ingress', 'egress']) {
    for (const rule of objects(spec[list])) for (const port of objects(rule.ports)) setDefault(port, 'protocol', 'TCP');
  }
  if (asList(spec.policyTypes).length === 0) {
    spec.policyTypes = asList(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function policyPort(field: string, port: Obj): Causes {
  const causes: Causes = [];
  if (port.protocol !== undefined && !PROTOCOLS.includes(port.protocol as string)) causes.push(notSupported(`${field}.protocol`, port.protocol, PROTOCOLS));
  const endPort = port.endPort;
  if (port.port === undefined) {
    if (endPort !== undefined) causes.push(invalid(`${field}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  } else if (typeof port.port === 'number') {
    causes.push(...portNumber(`${field}.port`, port.port));
    if (typeof endPort === 'number') {
      if (endPort < port.port) causes.push(invalid(`${field}.endPort`, port.port, 'must be greater than or equal to `port`'));
      causes.push(...portNumber(`${field}.endPort`, endPort));
    }
  } else {
    if (endPort !== undefined) causes.push(invalid(`${field}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    causes.push(...portName(`${field}.port`, String(port.port)));
  }
  return causes;
}

/** An ipBlock: a CIDR, and exceptions that are strict subsets of it. */
export function ipBlock(field: string, block: Obj): Causes {
  if (typeof block.cidr !== 'string' || block.cidr === '') return [required(`${field}.cidr`)];
  const cidr = parseCidr(block.cidr);
  if (!cidr) return [invalid(`${field}.cidr`, block.cidr, CIDR_DETAIL)];
  const causes: Causes = [];
  asList(block.except).forEach((text, i) => {
    const at = `${field}.except[${i}]`;
    const except = parseCidr(String(text));
    if (!except) causes.push(invalid(at, text, CIDR_DETAIL));
    else if (!strictlyContains(cidr, except)) causes.push(invalid(at, text, 'must be a strict subset of `cidr`'));
  });
  return causes;
}

function policyPeer(field: string, peer: Obj): Causes {
  const causes: Causes = [];
  let peers = 0;
  for (const selector of ['podSelector', 'namespaceSelector']) {
    if (peer[selector] === undefined) continue;
    peers++;
    causes.push(...labelSelector(`${field}.${selector}`, peer[selector]));
  }
  const block = asObj(peer.ipBlock);
  if (block) {
    peers++;
    causes.push(...ipBlock(`${field}.ipBlock`, block));
  }
  if (peers === 0) causes.push(required(field, 'must specify a peer'));
  else if (peers > 1 && block) causes.push(forbidden(field, 'may not specify both ipBlock and another peer'));
  return causes;
}

function policyRules(spec: Obj, list: 'ingress' | 'egress', peersField: 'from' | 'to'): Causes {
  return objects(spec[list]).flatMap((rule, i) => [
    ...objects(rule.ports).flatMap((p, j) => policyPort(`spec.${list}[${i}].ports[${j}]`, p)),
    ...objects(rule[peersField]).flatMap((p, j) => policyPeer(`spec.${list}[${i}].${peersField}[${j}]`, p)),
  ]);
}

function validateNetworkPolicy(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = spec.podSelector === undefined ? [required('spec.podSelector')] : labelSelector('spec.podSelector', spec.podSelector);
  causes.push(...policyRules(spec, 'ingress', 'from'), ...policyRules(spec, 'egress', 'to'));
  const types = asList(spec.policyTypes);
  if (types.length > POLICY_TYPES.length) return [...causes, invalid('spec.policyTypes', types, 'may not specify more than two policyTypes')];
  types.forEach((t, i) => { if (!POLICY_TYPES.includes(t as string)) causes.push(notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES)); });
  return causes;
}

const networkpolicies: KindSpec = {
  shortNames: ['netpol'],
  defaults: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
  tableColumns: [nameColumn, column('Pod-Selector', 'string', 'The pods the policy applies to.', (o) => selectorText(specOf(o).podSelector)), ageColumn],
};

// ---- Ingress and IngressClass ----

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const WILDCARD_HOST = /^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function ingressBackend(field: string, backend: unknown): Causes {
  const b = asObj(backend);
  if (!b) return [required(field)];
  const service = asObj(b.service);
  if (service && b.resource !== undefined) return [invalid(field, b, 'cannot set both resource and service backends')];
  if (!service) return b.resource === undefined ? [invalid(field, b, 'resource or service backend is required')] : [];
  const causes: Causes = typeof service.name === 'string' && service.name ? [] : [required(`${field}.service.name`)];
  const port = asObj(service.port) ?? {};
  if (port.name !== undefined && port.number !== undefined) causes.push(invalid(`${field}.service.port`, port, 'cannot set both port name & port number'));
  else if (typeof port.name === 'string') causes.push(...portName(`${field}.service.port.name`, port.name));
  else if (port.number !== undefined) causes.push(...portNumber(`${field}.service.port.number`, port.number));
  else causes.push(required(`${field}.service.port`, 'port name or number is required'));
  return causes;
}

function ingressHost(field: string, host: string): Causes {
  return host.startsWith('*') ? (WILDCARD_HOST.test(host) ? [] : [invalid(field, host, 'a wildcard DNS-1123 subdomain must start with \'*.\'')]) : dns1123Subdomain(field, host);
}

function validateIngress(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  if (spec.defaultBackend !== undefined) causes.push(...ingressBackend('spec.defaultBackend', spec.defaultBackend));
  if (typeof spec.ingressClassName === 'string') causes.push(...dns1123Subdomain('spec.ingressClassName', spec.ingressClassName));
  const rules = objects(spec.rules);
  if (rules.length === 0 && spec.defaultBackend === undefined) causes.push(invalid('spec.rules', [], 'either `defaultBackend` or `rules` must be specified'));
  rules.forEach((rule, i) => {
    if (typeof rule.host === 'string' && rule.host) causes.push(...ingressHost(`spec.rules[${i}].host`, rule.host));
    const http = asObj(rule.http);
    if (!http) return;
    const paths = objects(http.paths);
    if (paths.length === 0) causes.push(required(`spec.rules[${i}].http.paths`));
    paths.forEach((p, j) => {
      const at = `spec.rules[${i}].http.paths[${j}]`;
      causes.push(...oneOf(`${at}.pathType`, p.pathType, PATH_TYPES, true));
      if (p.pathType !== 'ImplementationSpecific' && !String(p.path ?? '').startsWith('/')) causes.push(invalid(`${at}.path`, p.path ?? '', 'must be an absolute path'));
      causes.push(...ingressBackend(`${at}.backend`, p.backend));
    });
  });
  objects(spec.tls).forEach((t, i) => asList(t.hosts).forEach((h, j) => causes.push(...ingressHost(`spec.tls[${i}].hosts[${j}]`, String(h)))));
  return causes;
}

const ingresses: KindSpec = {
  shortNames: ['ing'],
  initialStatus: () => ({ loadBalancer: {} }),
  validate: validateIngress,
  tableColumns: [nameColumn,
    column('Class', 'string', 'The name of the IngressClass resource that should be used for ingress.', (o) => specOf(o).ingressClassName ?? '<none>'),
    column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule', (o) => objects(specOf(o).rules).map((r) => r.host ?? '*').join(',') || '*'),
    column('Address', 'string', 'Address is a list of IP addresses to which traffic for this ingress is routed', (o) =>
      objects(asObj(statusOf(o).loadBalancer)?.ingress).map((i) => i.ip ?? i.hostname).join(',')),
    column('Ports', 'string', 'Ports of TLS configurations that open', (o) => (asList(specOf(o).tls).length ? '80, 443' : '80')),
    ageColumn],
};

const MAX_CONTROLLER_LENGTH = 250;

function validateIngressClass(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  const controller = str(spec.controller);
  if (!controller) causes.push(required('spec.controller'));
  else {
    if (controller.length > MAX_CONTROLLER_LENGTH) causes.push(tooLong('spec.controller', MAX_CONTROLLER_LENGTH));
    const slash = controller.indexOf('/');
    if (slash <= 0 || slash === controller.length - 1) causes.push(invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  }
  const params = asObj(spec.parameters);
  if (params) {
    if (!params.kind) causes.push(required('spec.parameters.kind'));
    if (!params.name) causes.push(required('spec.parameters.name'));
    causes.push(...oneOf('spec.parameters.scope', params.scope, ['Cluster', 'Namespace']));
    if (params.scope === 'Namespace' && !params.namespace) causes.push(required('spec.parameters.namespace', '`parameters.scope` is set to "Namespace"'));
    if (params.scope !== 'Namespace' && params.namespace) causes.push(forbidden('spec.parameters.namespace', '`parameters.scope` is set to "Cluster"'));
  }
  if (old) causes.push(...unchanged('spec.controller', spec.controller, specOf(old).controller));
  return causes;
}

const ingressclasses: KindSpec = {
  defaults(obj) {
    const params = asObj(specOf(obj).parameters);
    if (params) setDefault(params, 'scope', 'Cluster');
  },
  validate: validateIngressClass,
  tableColumns: [nameColumn,
    column('Controller', 'string', 'Controller that is responsible for handling this class', (o) => specOf(o).controller ?? ''),
    column('Parameters', 'string', 'A reference to a resource with additional parameters', (o) => {
      const p = asObj(specOf(o).parameters);
      return p ? `${p.apiGroup ? `${p.kind}.${p.apiGroup}` : p.kind}/${p.name}` : '<none>';
    }),
    ageColumn],
};

// ---- IPAddress and ServiceCIDR ----

function validateIPAddress(obj: ApiObject, old?: ApiObject): Causes {
  const name = obj.metadata?.name ?? '';
  const causes: Causes = isIP(name) ? [] : [invalid('metadata.name', name, 'must be a valid IP address')];
  const ref = asObj(specOf(obj).parentRef);
  if (!ref) causes.push(required('spec.parentRef'));
  else {
    if (!ref.resource) causes.push(required('spec.parentRef.resource'));
    if (!ref.name) causes.push(required('spec.parentRef.name'));
  }
  if (old) causes.push(...unchanged('spec.parentRef', specOf(obj).parentRef, specOf(old).parentRef));
  return causes;
}

const ipaddresses: KindSpec = {
  shortNames: ['ip'], nameRule: 'pathSegment', tracksGeneration: false,
  validate: validateIPAddress,
  tableColumns: [nameColumn, column('ParentRef', 'string', 'The object the address belongs to.', (o) => {
    const ref = asObj(specOf(o).parentRef) ?? {};
    return `${ref.group ? `${ref.resource}.${ref.group}` : ref.resource}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
  })],
};

function validateServiceCIDR(obj: ApiObject, old?: ApiObject): Causes {
  const cidrs = asList(specOf(obj).cidrs);
  const causes: Causes = [];
  if (cidrs.length === 0) causes.push(required('spec.cidrs'));
  if (cidrs.length > 2) causes.push(invalid('spec.cidrs', cidrs, 'may only hold up to 2 values'));
  const parsed = cidrs.map((c, i) => {
    const cidr = parseCidr(String(c));
    if (!cidr) causes.push(invalid(`spec.cidrs[${i}]`, c, CIDR_DETAIL));
    return cidr;
  });
  if (parsed.length === 2 && parsed[0] && parsed[1] && parsed[0].family === parsed[1].family) {
    causes.push(invalid('spec.cidrs', cidrs, 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  }
  const before = asList(specOf(old).cidrs);
  if (old && !(before.length === 1 && cidrs.length === 2 && cidrs[0] === before[0])) causes.push(...unchanged('spec.cidrs', specOf(obj).cidrs, specOf(old).cidrs));
  return causes;
}

const servicecidrs: KindSpec = {
  tracksGeneration: false,
  validate: validateServiceCIDR,
  tableColumns: [nameColumn, column('CIDRs', 'string', 'The CIDRs of the range.', (o) => asList(specOf(o).cidrs).join(',')), ageColumn],
};

export const networkingKinds: Record<string, KindSpec> = { networkpolicies, ingresses, ingressclasses, ipaddresses, servicecidrs };
