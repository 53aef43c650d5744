// Services: defaults, address families, and the rules users meet. Cluster IPs
// and node ports come from the gateway's allocator, which needs shared state.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, mapSelectorText, nameColumn } from '../columns.js';
import {
  dns1123Subdomain, duplicate, forbidden, invalid, labelMap, oneOf, portNumber, portNumberOrName, protocol, required, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { isIP, parseCidr, strictlyContains } from '../net.js';
import { asList, asObj, deepEqual, objects, setDefault, str, specOf, type Obj } from '../values.js';

/** The service network and the node port range of a default cluster. */
export const SERVICE_CIDR = '10.96.0.0/12';
export const NODE_PORT_RANGE = { min: 30000, max: 32767 };
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const CLIENT_IP_TIMEOUT_SECONDS = 10800;

const externallyAccessible = (spec: Obj) =>
  spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && asList(spec.externalIPs).length > 0);
export const usesNodePorts = (spec: Obj) => spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);

function defaultService(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP' && asObj(asObj(spec.sessionAffinityConfig)?.clientIP)?.timeoutSeconds === undefined) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: CLIENT_IP_TIMEOUT_SECONDS } };
  }
  setDefault(spec, 'type', 'ClusterIP');
  for (const p of objects(spec.ports)) {
    setDefault(p, 'protocol', 'TCP');
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (externallyAccessible(spec)) setDefault(spec, 'externalTrafficPolicy', 'Cluster');
  if (spec.type !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  if (spec.type === 'LoadBalancer') setDefault(spec, 'allocateLoadBalancerNodePorts', true);
}

/** Address families of a service, from the cluster IP it asks for (IPv4 when the allocator picks one). */
function setFamilies(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec || spec.type === 'ExternalName') return;
  const first = str(spec.clusterIP) || str(asList(spec.clusterIPs)[0]);
  if (first) spec.clusterIP = first;
  if (first && asList(spec.clusterIPs).length === 0) spec.clusterIPs = [first];
  setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
  if (asList(spec.ipFamilies).length === 0) spec.ipFamilies = [first && first !== 'None' && first.includes(':') ? 'IPv6' : 'IPv4'];
}

const needsHealthCheckNodePort = (spec: Obj) => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';

/** Every node port of `spec` is the one its port had before. */
const sameNodePorts = (spec: Obj, oldSpec: Obj) => objects(spec.ports)
  .every((p) => !p.nodePort || objects(oldSpec.ports).some((o) => o.port === p.port && o.nodePort === p.nodePort));

/**
 * An update to a type that no longer needs a field drops it when the write left
 * it as it was (the server set it, the user did not ask for it): cluster IPs and
 * families for ExternalName, node ports, the health check port, the load
 * balancer fields, and the traffic policies.
 */
function dropTypeDependentFields(obj: ApiObject, old: ApiObject): void {
  const spec = asObj(obj.spec);
  const oldSpec = specOf(old);
  if (!spec) return;
  const same = (f: string) => deepEqual(spec[f], oldSpec[f]);
  const drop = (f: string) => { delete spec[f]; };
  if (oldSpec.type !== 'ExternalName' && spec.type === 'ExternalName') {
    if (same('clusterIP') && same('clusterIPs')) ['clusterIP', 'clusterIPs'].forEach(drop);
    if (same('ipFamilies')) drop('ipFamilies');
    if (same('ipFamilyPolicy')) drop('ipFamilyPolicy');
  }
  if (usesNodePorts(oldSpec) && !usesNodePorts(spec) && sameNodePorts(spec, oldSpec)) for (const p of objects(spec.ports)) delete p.nodePort;
  if (needsHealthCheckNodePort(oldSpec) && !needsHealthCheckNodePort(spec) && same('healthCheckNodePort')) drop('healthCheckNodePort');
  if (oldSpec.type === 'LoadBalancer' && spec.type !== 'LoadBalancer') {
    if (same('allocateLoadBalancerNodePorts')) drop('allocateLoadBalancerNodePorts');
    if (same('loadBalancerClass')) drop('loadBalancerClass');
  }
  if (!externallyAccessible(spec) && same('externalTrafficPolicy')) drop('externalTrafficPolicy');
  if (spec.type === 'ExternalName') drop('internalTrafficPolicy');
}

/** Values the server assigned stay when an update leaves them out. */
function keepAllocated(obj: ApiObject, old: ApiObject): void {
  const spec = asObj(obj.spec);
  const oldSpec = specOf(old);
  if (!spec || spec.type === 'ExternalName' || oldSpec.type === 'ExternalName') return;
  for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) if (spec[f] === undefined || spec[f] === '') spec[f] = oldSpec[f];
  if (!usesNodePorts(spec)) return;
  for (const p of objects(spec.ports)) {
    const before = objects(oldSpec.ports).find((o) => o.port === p.port && o.protocol === p.protocol);
    if (!p.nodePort && before?.nodePort) p.nodePort = before.nodePort;
  }
}

function validatePorts(spec: Obj): Causes {
  const ports = objects(spec.ports);
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0) return spec.type === 'ExternalName' || headless ? [] : [required('spec.ports')];
  const causes: Causes = [];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && (typeof p.name !== 'string' || p.name === '')) causes.push(required(`${at}.name`));
    if (typeof p.name === 'string' && p.name) {
      if (names.has(p.name)) causes.push(duplicate(`${at}.name`, p.name));
      names.add(p.name);
    }
    causes.push(...portNumber(`${at}.port`, p.port), ...protocol(`${at}.protocol`, p.protocol));
    if (p.targetPort !== undefined) causes.push(...portNumberOrName(`${at}.targetPort`, p.targetPort));
    if (p.nodePort !== undefined && p.nodePort !== 0) {
      if (!usesNodePorts(spec)) causes.push(forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${spec.type}'`));
      else causes.push(...portNumber(`${at}.nodePort`, p.nodePort));
    }
  });
  return causes;
}

function validateClusterIPs(spec: Obj): Causes {
  const causes: Causes = [];
  const range = parseCidr(SERVICE_CIDR)!;
  asList(spec.clusterIPs).forEach((ip, i) => {
    if (ip === 'None' || ip === '') return;
    const at = `spec.clusterIPs[${i}]`;
    if (typeof ip !== 'string' || !isIP(ip)) causes.push(invalid(at, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    else if (!ip.includes(':') && !strictlyContains(range, parseCidr(`${ip}/32`)!)) {
      causes.push(invalid(at, ip, `provided IP is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`));
    }
  });
  if (spec.clusterIP !== undefined && asList(spec.clusterIPs).length && spec.clusterIP !== asList(spec.clusterIPs)[0]) {
    causes.push(invalid('spec.clusterIPs', spec.clusterIPs, 'element [0] must match clusterIP'));
  }
  return causes;
}

function validateService(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = [
    ...oneOf('spec.type', spec.type, SERVICE_TYPES, true),
    ...oneOf('spec.sessionAffinity', spec.sessionAffinity, ['None', 'ClientIP'], true),
    ...oneOf('spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local']),
    ...labelMap('spec.selector', spec.selector),
    ...validatePorts(spec),
    ...validateClusterIPs(spec),
  ];
  if (spec.externalTrafficPolicy !== undefined) {
    if (!externallyAccessible(spec)) causes.push(invalid('spec.externalTrafficPolicy', spec.externalTrafficPolicy, 'may only be set for externally-accessible services'));
    else causes.push(...oneOf('spec.externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local']));
  }
  if (spec.type === 'ExternalName') {
    if (typeof spec.externalName !== 'string' || spec.externalName === '') causes.push(required('spec.externalName'));
    else causes.push(...dns1123Subdomain('spec.externalName', spec.externalName.replace(/\.$/, '')));
  }
  asList(spec.externalIPs).forEach((ip, i) => { if (!isIP(String(ip))) causes.push(invalid(`spec.externalIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')); });
  if (old) causes.push(...validateServiceUpdate(spec, specOf(old)));
  return causes;
}

/** Assigned cluster IPs may not change, unless the type moves to or from ExternalName. */
function validateServiceUpdate(spec: Obj, oldSpec: Obj): Causes {
  if (spec.type === 'ExternalName' || oldSpec.type === 'ExternalName') return [];
  const before = asList(oldSpec.clusterIPs);
  const after = asList(spec.clusterIPs);
  return before.flatMap((ip, i) => (after[i] !== undefined && after[i] !== ip ? [invalid(`spec.clusterIPs[${i}]`, after[i], 'may not change once set')] : []));
}

function externalIPText(o: ApiObject): string {
  const spec = specOf(o);
  const ingress = objects(asObj(asObj(o.status)?.loadBalancer)?.ingress).map((i) => i.ip ?? i.hostname);
  const external = asList(spec.externalIPs).map(String);
  switch (spec.type) {
    case 'LoadBalancer': return [...ingress, ...external].join(',') || '<pending>';
    case 'ExternalName': return str(spec.externalName) ?? '<none>';
    default: return external.join(',') || '<none>';
  }
}

const portsText = (o: ApiObject) => objects(specOf(o).ports)
  .map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',') || '<none>';

const services: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['svc'], categories: ['all'], nameRule: 'dns1035label', tracksGeneration: false,
  selectableFields: { 'spec.clusterIP': (o) => str(specOf(o).clusterIP) ?? '', 'spec.type': (o) => str(specOf(o).type) ?? '' },
  initialStatus: () => ({ loadBalancer: {} }),
  defaults: defaultService,
  create: setFamilies,
  update(obj, old) {
    dropTypeDependentFields(obj, old);
    keepAllocated(obj, old);
    setFamilies(obj);
  },
  validate: validateService,
  tableColumns: [nameColumn,
    column('Type', 'string', 'The type of the service.', (o) => specOf(o).type ?? ''),
    column('Cluster-IP', 'string', 'The cluster IP of the service.', (o) => specOf(o).clusterIP ?? '<none>'),
    column('External-IP', 'string', 'The external IPs of the service.', externalIPText),
    column('Port(s)', 'string', 'The ports of the service.', portsText),
    ageColumn,
    column('Selector', 'string', 'The label selector of the service.', (o) => mapSelectorText(specOf(o).selector), 1)],
};

export const coreServiceKinds: Record<string, KindSpec> = { services };
