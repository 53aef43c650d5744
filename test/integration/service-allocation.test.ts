import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const SVCS = '/api/v1/namespaces/default/services';
const IPS = '/apis/networking.svc.io/v1/ipaddresses';

const service = (name: string, spec: Record<string, unknown> = {}) =>
  ({ metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } });

describe('cluster IPs and node ports of services', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  const create = (body: unknown, query = '') => c.request('POST', `${SVCS}${query}`, { body });
  const ipExists = async (ip: string) => (await c.request('GET', `${IPS}/${ip}`)).status === 200;

  function expectRefused(res: { status: number; body: any }, field: string, text: string): void {
    expect(res.status).to.equal(422);
    expect(res.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(res.body.details.causes).to.have.length(1);
    expect(res.body.details.causes[0]).to.include({ field, reason: 'FieldValueInvalid' });
    expect(res.body.details.causes[0].message).to.include(text);
  }

  it('starts with the default ServiceCIDR and the kubernetes service on the first address', async () => {
    expect(await waitFor(async () => (await c.request('GET', `${SVCS}/kubernetes`)).status === 200, 10_000)).to.equal(true);
    const api = (await c.request('GET', `${SVCS}/kubernetes`)).body;
    expect(api.spec).to.include({ type: 'ClusterIP', clusterIP: '10.96.0.1' });
    expect(api.spec.ports[0]).to.include({ name: 'https', port: 443, protocol: 'TCP' });
    const cidr = await c.request('GET', '/apis/networking.svc.io/v1/servicecidrs/kubernetes');
    expect(cidr.status).to.equal(200);
    expect(cidr.body.spec.cidrs).to.deep.equal(['10.96.0.0/12']);
    const ip = await c.request('GET', `${IPS}/10.96.0.1`);
    expect(ip.body.spec.parentRef).to.deep.include({ resource: 'services', namespace: 'default', name: 'kubernetes' });
    const port = c.port;
    const endpoints = (await c.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).body;
    expect(endpoints.subsets).to.deep.equal([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }]);
    expect(api.spec.ports[0].targetPort).to.equal(port);
    const slices = (await c.request('GET', '/apis/discovery.svc.io/v1/namespaces/default/endpointslices?labelSelector=svc.io/service-name%3Dkubernetes')).body;
    expect(slices.items).to.have.length(1);
    expect(slices.items[0]).to.deep.include({ addressType: 'IPv4', ports: [{ name: 'https', port, protocol: 'TCP' }] });
    // kubectl selects slices by the upstream spelling of the label.
    const upstream = (await c.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name%3Dkubernetes')).body;
    expect(upstream.items.map((s: any) => s.metadata.name)).to.deep.equal(['kubernetes']);
    expect(upstream.items[0].metadata.labels).to.deep.equal({ 'svc.io/service-name': 'kubernetes' });
    const described = await kubectl(c.kubeconfig, ['describe', 'service', 'kubernetes', '-n', 'default']);
    expect(described.code, described.stderr).to.equal(0);
    expect(described.stdout).to.match(new RegExp(`Endpoints:\\s+127\\.0\\.0\\.1:${port}`));
  });

  it('a gateway started on another port brings the kubernetes service and its endpoints up to date', async () => {
    const before = c.port;
    await c.kill('gateway');
    c.port = 0;
    await c.startService('gateway');
    expect(c.port).to.not.equal(before);
    const current = async () => {
      const svc = (await c.request('GET', `${SVCS}/kubernetes`)).body;
      const endpoints = (await c.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).body;
      return svc.spec.ports[0].targetPort === c.port && endpoints.subsets[0].ports[0].port === c.port;
    };
    expect(await waitFor(current, 10_000)).to.equal(true);
    expect((await c.request('GET', `${SVCS}/kubernetes`)).body.spec.clusterIP).to.equal('10.96.0.1');
  });

  it('gives every service its own address from the dynamic part of the range, recorded as an IPAddress', async () => {
    const made = await Promise.all(Array.from({ length: 30 }, (_, i) => create(service(`many-${i}`))));
    expect(made.map((r) => r.status)).to.deep.equal(made.map(() => 201));
    const ips = made.map((r) => r.body.spec.clusterIP as string);
    expect(new Set(ips).size).to.equal(ips.length);
    for (const ip of ips) expect(ip).to.match(/^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/).and.not.match(/^10\.96\.0\./);
    const record = await c.request('GET', `${IPS}/${ips[0]}`);
    expect(record.status).to.equal(200);
    expect(record.body.spec.parentRef).to.deep.include({ resource: 'services', namespace: 'default', name: 'many-0' });
    expect(record.body.metadata.labels).to.deep.equal({ 'ipaddress.svc.io/ip-family': 'IPv4', 'ipaddress.svc.io/managed-by': 'ipallocator.svc.io' });
  });

  it('hands out an address asked for once, and refuses one out of the range', async () => {
    expect((await create(service('static', { clusterIP: '10.96.0.10' }))).status).to.equal(201);
    expect(await ipExists('10.96.0.10')).to.equal(true);
    expectRefused(await create(service('again', { clusterIP: '10.96.0.10' })), 'spec.clusterIPs[0]', 'provided IP is already allocated');
    expectRefused(await create(service('api', { clusterIP: '10.96.0.1' })), 'spec.clusterIPs[0]', 'provided IP is already allocated');
    expectRefused(await create(service('outside', { clusterIP: '10.200.0.5' })), 'spec.clusterIPs[0]', 'not in the valid range');
    expect((await c.request('GET', `${SVCS}/again`)).status).to.equal(404);
  });

  it('gives node ports once, and refuses a taken or out-of-range one without keeping the cluster IP it asked for', async () => {
    const a = await create(service('np-a', { type: 'NodePort' }));
    const b = await create(service('np-b', { type: 'NodePort', ports: [{ name: 'http', port: 80, nodePort: 30080 }, { name: 'dns', port: 53, protocol: 'UDP' }] }));
    expect([a.status, b.status]).to.deep.equal([201, 201]);
    const ports = [a.body.spec.ports[0].nodePort, ...b.body.spec.ports.map((p: any) => p.nodePort)];
    expect(ports[1]).to.equal(30080);
    expect(new Set(ports).size).to.equal(3);
    for (const p of ports) expect(p).to.be.within(30000, 32767);
    expectRefused(await create(service('np-c', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ port: 80, nodePort: 30080 }] })),
      'spec.ports[0].nodePort', 'provided port is already allocated');
    expect(await ipExists('10.96.0.20')).to.equal(false);
    expectRefused(await create(service('np-d', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] })),
      'spec.ports[0].nodePort', 'not in the valid range');
  });

  it('releases the address and node ports of a deleted service for the next one', async () => {
    expect((await create(service('gone', { type: 'NodePort', clusterIP: '10.96.0.30', ports: [{ port: 80, nodePort: 30300 }] }))).status).to.equal(201);
    expect((await c.request('DELETE', `${SVCS}/gone`)).status).to.equal(200);
    expect(await waitFor(async () => !(await ipExists('10.96.0.30')), 10_000)).to.equal(true);
    const next = await create(service('next', { type: 'NodePort', clusterIP: '10.96.0.30', ports: [{ port: 80, nodePort: 30300 }] }));
    expect(next.status).to.equal(201);
    expect((await c.request('GET', `${IPS}/10.96.0.30`)).body.spec.parentRef.name).to.equal('next');
  });

  it('an update from NodePort to ClusterIP drops the node ports the server gave and lets them go', async () => {
    const svc = (await create(service('np-back', { type: 'NodePort' }))).body;
    const port = svc.spec.ports[0].nodePort as number;
    const res = await c.request('PATCH', `${SVCS}/np-back`, { body: { spec: { type: 'ClusterIP' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.spec.ports[0].nodePort).to.equal(undefined);
    expect(res.body.spec.externalTrafficPolicy).to.equal(undefined);
    expect(res.body.spec.clusterIP).to.equal(svc.spec.clusterIP);
    const taken = () => create(service(`np-reuse-${Date.now()}`, { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }));
    expect(await waitFor(async () => (await taken()).status === 201, 10_000)).to.equal(true);
  });

  it('bad cluster IPs and node ports are 422 with the field named, and take nothing', async () => {
    const before = (await c.request('GET', IPS)).body.items.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ clusterIP: 123 }, 'spec.clusterIP'],
      [{ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.6'] }, 'spec.clusterIPs'],
      [{ clusterIP: 'fd00::10' }, 'spec.ipFamilies[0]'],
      [{ type: 'NodePort', ports: [{ port: 80, nodePort: 'high' }] }, 'spec.ports[0].nodePort'],
      [{ type: 'NodePort', ports: [{ port: 80, nodePort: 1.5 }] }, 'spec.ports[0].nodePort'],
      [{ type: 'LoadBalancer', clusterIP: '10.96.0.7', ports: [{ port: 80, nodePort: -3 }] }, 'spec.ports[0].nodePort'],
    ];
    for (const [spec, field] of cases) {
      const res = await create(service('bad', spec));
      expect(res.status, JSON.stringify(spec)).to.equal(422);
      expect(res.body.reason).to.equal('Invalid');
      expect(res.body.details.causes.map((x: any) => x.field), JSON.stringify(spec)).to.include(field);
    }
    expect((await c.request('GET', IPS)).body.items.length).to.equal(before);
    expect(await ipExists('10.96.0.6')).to.equal(false);
    expect(await ipExists('10.96.0.7')).to.equal(false);
  });

  it('a dry run shows an address without taking it', async () => {
    const dry = await create(service('dry', { clusterIP: '10.96.0.40' }), '?dryRun=All');
    expect(dry.status).to.equal(201);
    expect(dry.body.spec.clusterIP).to.equal('10.96.0.40');
    expect(await ipExists('10.96.0.40')).to.equal(false);
    const picked = await create(service('dry-picked'), '?dryRun=All');
    expect(picked.body.spec.clusterIP).to.match(/^10\./);
    expect(await ipExists(picked.body.spec.clusterIP)).to.equal(false);
  });

  it('an update to ExternalName lets the address go; one back to ClusterIP takes a new one', async () => {
    const svc = (await create(service('flip'))).body;
    const ip = svc.spec.clusterIP as string;
    const patch = (body: unknown) => c.request('PATCH', `${SVCS}/flip`, { body, headers: { 'content-type': 'application/merge-patch+json' } });
    const external = await patch({ spec: { type: 'ExternalName', externalName: 'example.com', selector: null } });
    expect(external.status, JSON.stringify(external.body)).to.equal(200);
    expect(await waitFor(async () => !(await ipExists(ip)), 10_000)).to.equal(true);
    const back = await patch({ spec: { type: 'ClusterIP', externalName: null, selector: { app: 'flip' } } });
    expect(back.status, JSON.stringify(back.body)).to.equal(200);
    expect(back.body.spec.clusterIP).to.match(/^10\./);
    expect((await c.request('GET', `${IPS}/${back.body.spec.clusterIP}`)).body.spec.parentRef.name).to.equal('flip');
  });
});
