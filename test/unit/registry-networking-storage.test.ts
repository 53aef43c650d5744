// NetworkPolicy, CSIDriver and VolumeAttachment: every rule of document 3, a
// valid and an invalid object each, defaults, immutable fields, the status split.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { group } from '../../internal/names/index.js';
import { builtinRegistry, type KindDef } from '../../internal/registry/index.js';

const registry = builtinRegistry();
const policies = registry.lookup(group('networking'), 'v1', 'networkpolicies')!;
const drivers = registry.lookup(group('storage'), 'v1', 'csidrivers')!;
const attachments = registry.lookup(group('storage'), 'v1', 'volumeattachments')!;

function create(def: KindDef, obj: ApiObject): { obj: ApiObject; causes: StatusCause[] } {
  const o = structuredClone(obj);
  def.prepareForCreate!(o);
  return { obj: o, causes: def.validate!(o) };
}

function update(def: KindDef, old: ApiObject, change: (o: ApiObject) => void): StatusCause[] {
  const next = structuredClone(old);
  change(next);
  def.prepareForUpdate!(next, old);
  return def.validate!(next, old);
}

const fields = (causes: StatusCause[]) => causes.map((c) => [c.field, c.reason]);
const spec = (o: ApiObject) => o.spec as any;

describe('registry: NetworkPolicy', () => {
  const policy = (s: Record<string, unknown>): ApiObject => ({
    apiVersion: `${group('networking')}/v1`, kind: 'NetworkPolicy', metadata: { name: 'db', namespace: 'default', uid: 'u' }, spec: { podSelector: {}, ...s },
  });
  const check = (s: Record<string, unknown>) => create(policies, policy(s));
  const valid = (s: Record<string, unknown>) => {
    const res = check(s);
    expect(res.causes, JSON.stringify(res.causes)).to.deep.equal([]);
    return res.obj;
  };

  it('requires podSelector; an empty one selects every pod', () => {
    valid({});
    const o = policy({});
    delete (o.spec as any).podSelector;
    expect(fields(create(policies, o).causes)).to.deep.equal([['spec.podSelector', 'FieldValueRequired']]);
    expect(fields(check({ podSelector: { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] } }).causes))
      .to.deep.equal([['spec.podSelector.matchExpressions[0].operator', 'FieldValueInvalid']]);
  });

  it('defaults policyTypes to Ingress, plus Egress when egress rules are given', () => {
    expect(spec(valid({})).policyTypes).to.deep.equal(['Ingress']);
    expect(spec(valid({ egress: [{}] })).policyTypes).to.deep.equal(['Ingress', 'Egress']);
    expect(spec(valid({ policyTypes: ['Egress'] })).policyTypes).to.deep.equal(['Egress']);
  });

  it('policyTypes only Ingress and Egress, at most two', () => {
    expect(fields(check({ policyTypes: ['Sideways'] }).causes)).to.deep.equal([['spec.policyTypes[0]', 'FieldValueNotSupported']]);
    expect(fields(check({ policyTypes: ['Ingress', 'Egress', 'Ingress'] }).causes)).to.deep.equal([['spec.policyTypes', 'FieldValueInvalid']]);
  });

  it('defaults the port protocol to TCP; protocols TCP, UDP, SCTP', () => {
    const o = valid({ ingress: [{ ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }] }] });
    expect(spec(o).ingress[0].ports.map((p: any) => p.protocol)).to.deep.equal(['TCP', 'UDP']);
    expect(fields(check({ ingress: [{ ports: [{ port: 80, protocol: 'ICMP' }] }] }).causes)).to.deep.equal([['spec.ingress[0].ports[0].protocol', 'FieldValueNotSupported']]);
  });

  it('ports: numbers 1-65535 or a named port', () => {
    valid({ ingress: [{ ports: [{ port: 'http' }, { port: 65535 }] }] });
    expect(fields(check({ ingress: [{ ports: [{ port: 0 }] }] }).causes)).to.deep.equal([['spec.ingress[0].ports[0].port', 'FieldValueInvalid']]);
    expect(fields(check({ ingress: [{ ports: [{ port: 'not_a_name' }] }] }).causes)[0]).to.deep.equal(['spec.ingress[0].ports[0].port', 'FieldValueInvalid']);
  });

  it('endPort: at least port, not with a missing or named port', () => {
    valid({ egress: [{ ports: [{ port: 32000, endPort: 32768 }] }] });
    const at = 'spec.egress[0].ports[0].endPort';
    expect(fields(check({ egress: [{ ports: [{ port: 32000, endPort: 31000 }] }] }).causes)).to.deep.equal([[at, 'FieldValueInvalid']]);
    expect(fields(check({ egress: [{ ports: [{ endPort: 31000 }] }] }).causes)).to.deep.equal([[at, 'FieldValueInvalid']]);
    expect(fields(check({ egress: [{ ports: [{ port: 'http', endPort: 31000 }] }] }).causes)).to.deep.equal([[at, 'FieldValueInvalid']]);
  });

  it('a peer names at least one selector or an ipBlock, and an ipBlock excludes the other fields', () => {
    valid({ ingress: [{ from: [{ podSelector: {}, namespaceSelector: { matchLabels: { team: 'a' } } }, { ipBlock: { cidr: '10.0.0.0/8' } }] }] });
    expect(fields(check({ ingress: [{ from: [{}] }] }).causes)).to.deep.equal([['spec.ingress[0].from[0]', 'FieldValueRequired']]);
    expect(fields(check({ egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] }).causes)).to.deep.equal([['spec.egress[0].to[0]', 'FieldValueForbidden']]);
  });

  it('ipBlock: a valid cidr (IPv4 or IPv6) whose exceptions lie strictly inside it', () => {
    valid({ ingress: [{ from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }, { ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48'] } }] }] });
    const at = 'spec.ingress[0].from[0].ipBlock';
    const block = (b: Record<string, unknown>) => fields(check({ ingress: [{ from: [{ ipBlock: b }] }] }).causes);
    expect(block({ cidr: '172.17.0.0/16', except: ['172.18.0.0/24'] })).to.deep.equal([[`${at}.except[0]`, 'FieldValueInvalid']]);
    expect(block({ cidr: '172.17.0.0/16', except: ['172.17.0.0/16'] })).to.deep.equal([[`${at}.except[0]`, 'FieldValueInvalid']]);
    expect(block({ cidr: '2001:db8::/32', except: ['2001:db9::/48'] })).to.deep.equal([[`${at}.except[0]`, 'FieldValueInvalid']]);
    expect(block({ cidr: '2001:db8::/32', except: ['10.0.0.0/8'] })).to.deep.equal([[`${at}.except[0]`, 'FieldValueInvalid']]);
    expect(block({ cidr: '300.1.0.0/16' })).to.deep.equal([[`${at}.cidr`, 'FieldValueInvalid']]);
    expect(block({ cidr: '' })).to.deep.equal([[`${at}.cidr`, 'FieldValueRequired']]);
  });

  it('tracks the generation; every field stays mutable', () => {
    const old = valid({ ingress: [{}] });
    const next = structuredClone(old);
    spec(next).ingress = [];
    policies.prepareForUpdate!(next, old);
    expect(policies.validate!(next, old)).to.deep.equal([]);
    expect(next.metadata!.generation).to.equal(2);
  });
});

describe('registry: CSIDriver', () => {
  const driver = (name: string, s: Record<string, unknown> = {}): ApiObject => ({ apiVersion: `${group('storage')}/v1`, kind: 'CSIDriver', metadata: { name, uid: 'u' }, spec: s });
  const valid = (s: Record<string, unknown> = {}, name = 'ebs.csi.example.com') => {
    const res = create(drivers, driver(name, s));
    expect(res.causes, JSON.stringify(res.causes)).to.deep.equal([]);
    return res.obj;
  };

  it('defaults attachRequired true; podInfoOnMount, storageCapacity, requiresRepublish, seLinuxMount false; fsGroupPolicy ReadWriteOnceWithFSType; modes Persistent', () => {
    expect(valid().spec).to.deep.equal({
      attachRequired: true, podInfoOnMount: false, storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType',
      volumeLifecycleModes: ['Persistent'], requiresRepublish: false, seLinuxMount: false,
    });
  });

  it('spec is required', () => {
    const o = driver('x.example.com');
    delete o.spec;
    expect(fields(drivers.validate!(o))).to.deep.equal([['spec', 'FieldValueRequired']]);
  });

  it('the name: at most 63 characters, letters and digits at both ends, - and . inside', () => {
    valid({}, 'a'.repeat(63));
    expect(fields(create(drivers, driver('a'.repeat(64))).causes)).to.deep.equal([['metadata.name', 'FieldValueTooLong']]);
    expect(fields(create(drivers, driver('-driver')).causes)).to.deep.equal([['metadata.name', 'FieldValueInvalid']]);
  });

  it('fsGroupPolicy ReadWriteOnceWithFSType, File or None', () => {
    valid({ fsGroupPolicy: 'File' });
    expect(fields(create(drivers, driver('d.example.com', { fsGroupPolicy: 'Always' })).causes)).to.deep.equal([['spec.fsGroupPolicy', 'FieldValueNotSupported']]);
  });

  it('volumeLifecycleModes: Persistent or Ephemeral, unique', () => {
    valid({ volumeLifecycleModes: ['Persistent', 'Ephemeral'] });
    expect(fields(create(drivers, driver('d.example.com', { volumeLifecycleModes: ['Forever'] })).causes)).to.deep.equal([['spec.volumeLifecycleModes', 'FieldValueNotSupported']]);
    expect(fields(create(drivers, driver('d.example.com', { volumeLifecycleModes: ['Ephemeral', 'Ephemeral'] })).causes)).to.deep.equal([['spec.volumeLifecycleModes[1]', 'FieldValueDuplicate']]);
  });

  it('tokenRequests: audiences unique (at most one empty), expirationSeconds between 10 minutes and 2^32 seconds', () => {
    valid({ tokenRequests: [{ audience: '' }, { audience: 'vault', expirationSeconds: 3600 }] });
    expect(fields(create(drivers, driver('d.example.com', { tokenRequests: [{ audience: '' }, { audience: '' }] })).causes)).to.deep.equal([['spec.tokenRequests[1].audience', 'FieldValueDuplicate']]);
    expect(fields(create(drivers, driver('d.example.com', { tokenRequests: [{ audience: 'a', expirationSeconds: 599 }] })).causes)).to.deep.equal([['spec.tokenRequests[0].expirationSeconds', 'FieldValueInvalid']]);
    expect(fields(create(drivers, driver('d.example.com', { tokenRequests: [{ audience: 'a', expirationSeconds: 2 ** 32 + 1 }] })).causes)).to.deep.equal([['spec.tokenRequests[0].expirationSeconds', 'FieldValueInvalid']]);
  });

  it('nodeAllocatableUpdatePeriodSeconds at least 10', () => {
    valid({ nodeAllocatableUpdatePeriodSeconds: 10 });
    expect(fields(create(drivers, driver('d.example.com', { nodeAllocatableUpdatePeriodSeconds: 9 })).causes)).to.deep.equal([['spec.nodeAllocatableUpdatePeriodSeconds', 'FieldValueInvalid']]);
  });

  it('attachRequired and volumeLifecycleModes are immutable; the others are mutable', () => {
    const old = valid();
    expect(fields(update(drivers, old, (o) => { spec(o).attachRequired = false; }))).to.deep.equal([['spec.attachRequired', 'FieldValueInvalid']]);
    expect(fields(update(drivers, old, (o) => { spec(o).volumeLifecycleModes = ['Ephemeral']; }))).to.deep.equal([['spec.volumeLifecycleModes', 'FieldValueInvalid']]);
    expect(update(drivers, old, (o) => {
      Object.assign(spec(o), { podInfoOnMount: true, fsGroupPolicy: 'File', storageCapacity: true, requiresRepublish: true, seLinuxMount: true,
        tokenRequests: [{ audience: 'vault' }], nodeAllocatableUpdatePeriodSeconds: 60 });
    })).to.deep.equal([]);
  });
});

describe('registry: VolumeAttachment', () => {
  const attachment = (s: Record<string, unknown>): ApiObject => ({
    apiVersion: `${group('storage')}/v1`, kind: 'VolumeAttachment', metadata: { name: 'csi-123', uid: 'u' },
    spec: { attacher: 'ebs.csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' }, ...s },
  });
  const inline = { accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.example.com', volumeHandle: 'vol-1' } };

  it('a valid attachment starts with status attached false', () => {
    const { obj, causes } = create(attachments, attachment({}));
    expect(causes).to.deep.equal([]);
    expect(obj.status).to.deep.equal({ attached: false });
    expect(attachments.statusSubresource).to.equal(true);
  });

  it('requires attacher, nodeName and source', () => {
    const o = attachment({});
    delete (o.spec as any).attacher;
    delete (o.spec as any).nodeName;
    delete (o.spec as any).source;
    expect(fields(create(attachments, o).causes).map((f) => f[0]).sort()).to.deep.equal(['spec.attacher', 'spec.nodeName', 'spec.source']);
  });

  it('source: exactly one of persistentVolumeName and inlineVolumeSpec', () => {
    expect(create(attachments, attachment({ source: { inlineVolumeSpec: inline } })).causes).to.deep.equal([]);
    expect(fields(create(attachments, attachment({ source: {} })).causes)).to.deep.equal([['spec.source', 'FieldValueRequired']]);
    expect(fields(create(attachments, attachment({ source: { persistentVolumeName: 'pv', inlineVolumeSpec: inline } })).causes)).to.deep.equal([['spec.source', 'FieldValueForbidden']]);
    expect(fields(create(attachments, attachment({ source: { persistentVolumeName: '' } })).causes)).to.deep.equal([['spec.source.persistentVolumeName', 'FieldValueRequired']]);
  });

  it('the spec is immutable', () => {
    const old = create(attachments, attachment({})).obj;
    expect(fields(update(attachments, old, (o) => { spec(o).nodeName = 'node-2'; }))).to.deep.equal([['spec', 'FieldValueInvalid']]);
  });

  it('spec writes keep the status; status writes keep the spec and check the status fields', () => {
    const old = create(attachments, attachment({})).obj;
    const spec1 = structuredClone(old);
    spec1.status = { attached: true };
    attachments.prepareForUpdate!(spec1, old);
    expect(spec1.status).to.deep.equal({ attached: false });
    const status = { ...structuredClone(old), spec: { ...spec(old), nodeName: 'other' }, status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } } };
    attachments.prepareForStatusUpdate!(status, old);
    expect(spec(status).nodeName).to.equal('node-1');
    expect(status.status).to.deep.equal({ attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } });
    expect(attachments.validateStatusUpdate!(status, old)).to.deep.equal([]);
    const tooLong = { ...structuredClone(old), status: { attached: false, attachError: { message: 'x'.repeat(1025), time: '2025-01-01T00:00:00Z' } } };
    attachments.prepareForStatusUpdate!(tooLong, old);
    expect(fields(attachments.validateStatusUpdate!(tooLong, old))).to.deep.equal([['status.attachError.message', 'FieldValueTooLong']]);
    const unset = { ...structuredClone(old), status: { attachmentMetadata: {} } };
    attachments.prepareForStatusUpdate!(unset, old);
    expect((unset.status as any).attached, 'a required boolean decodes as false').to.equal(false);
  });
});
