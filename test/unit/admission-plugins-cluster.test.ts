// The cluster admission plugins on requests built here: the branches a client
// cannot reach through the API (validation answers first) and the choices the
// integration tests see only in part.
import { expect } from 'chai';
import { AdmissionError, type AdmissionRequest, type AuthorizeAttributes, type JsonObject, type Operation } from '../../internal/admission/index.js';
import { authorizedForSigner } from '../../internal/admission/plugins/certificate-signers.js';
import { certificateSigning } from '../../internal/admission/plugins/certificate-signing.js';
import { PersistentVolumeClaimResize } from '../../internal/admission/plugins/pvcresize.js';
import { TaintNodesByCondition } from '../../internal/admission/plugins/taintnodesbycondition.js';
import { StorageObjectInUseProtection } from '../../internal/admission/plugins/storageobjectinuseprotection.js';
import { alwaysPullImages } from '../../internal/admission/plugins/alwayspullimages.js';
import { DenyServiceExternalIPs } from '../../internal/admission/plugins/denyserviceexternalips.js';
import { newestDefault } from '../../internal/admission/plugins/default-class.js';
import type { StorageClient } from '../../internal/storage/client.js';

const USER = { username: 'u', uid: '', groups: [], extra: {} };

function request(operation: Operation, resource: string, object?: JsonObject, oldObject?: JsonObject, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  const group = resource === 'certificatesigningrequests' ? 'certificates.svc.io' : '';
  return {
    uid: 'x', kind: { group, version: 'v1', kind: '' }, resource: { group, version: 'v1', resource }, subresource: '', name: 'n', namespace: '',
    operation, user: USER, object, oldObject, dryRun: false, ...extra,
  };
}

async function refusal(promise: Promise<unknown>): Promise<AdmissionError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AdmissionError) return err;
    throw err;
  }
  throw new Error('admitted');
}

describe('cluster admission plugins', () => {
  it('newestDefault: the newest default class, the first by name among equally new ones', () => {
    const classes = [
      { name: 'b', created: 2, isDefault: true }, { name: 'a', created: 2, isDefault: true },
      { name: 'z', created: 3, isDefault: false }, { name: 'c', created: 1, isDefault: true },
    ];
    expect(newestDefault(classes)?.name).to.equal('a');
    expect(newestDefault(classes.filter((c) => !c.isDefault))).to.equal(undefined);
  });

  it('PersistentVolumeClaimResize: growing an unbound claim is refused before any class is read', async () => {
    const plugin = new PersistentVolumeClaimResize({} as StorageClient);
    const claim = (storage: string, phase?: string) => ({ spec: { storageClassName: 'sc', resources: { requests: { storage } } }, status: { phase } });
    const err = await refusal(plugin.admit(request('UPDATE', 'persistentvolumeclaims', claim('2Gi'), claim('1Gi', 'Pending'))));
    expect(err).to.include({ code: 403, message: 'persistentvolumeclaims "n" is forbidden: Only bound persistent volume claims can be expanded' });
    // Keeping or shrinking the request is not this plugin's concern.
    await plugin.admit(request('UPDATE', 'persistentvolumeclaims', claim('1Gi'), claim('1024Mi', 'Pending')));
  });

  it('TaintNodesByCondition and StorageObjectInUseProtection add what is missing, once', async () => {
    const taints = new TaintNodesByCondition();
    const added = await taints.admit(request('CREATE', 'nodes', { metadata: { name: 'n' }, spec: { taints: [{ key: 'node.svc.io/not-ready', effect: 'NoExecute' }] } }));
    expect((added as { object: any }).object.spec.taints).to.deep.equal([
      { key: 'node.svc.io/not-ready', effect: 'NoExecute' }, { key: 'node.svc.io/not-ready', effect: 'NoSchedule' }]);
    expect(await taints.admit(request('CREATE', 'nodes', { spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] } }))).to.equal(undefined);
    expect(await taints.admit(request('CREATE', 'nodes', { spec: {} }, undefined, { subresource: 'status' }))).to.equal(undefined);

    const protection = new StorageObjectInUseProtection();
    const pv = await protection.admit(request('CREATE', 'persistentvolumes', { metadata: { finalizers: ['a/b'] } }));
    expect((pv as { object: any }).object.metadata.finalizers).to.deep.equal(['a/b', 'svc.io/pv-protection']);
    expect(await protection.admit(request('CREATE', 'persistentvolumeclaims', { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } }))).to.equal(undefined);
    expect(await protection.admit(request('CREATE', 'configmaps', { metadata: {} }))).to.equal(undefined);
  });

  it('AlwaysPullImages leaves an update without a new image alone, and its validating half refuses another policy', async () => {
    const [defaulter, validator] = alwaysPullImages();
    const pod = (image: string, policy: string) => ({ spec: { containers: [{ name: 'c', image, imagePullPolicy: policy }] } });
    expect(await defaulter.admit(request('UPDATE', 'pods', pod('a', 'Never'), pod('a', 'Never')))).to.equal(undefined);
    expect(((await defaulter.admit(request('UPDATE', 'pods', pod('b', 'Never'), pod('a', 'Never')))) as { object: any }).object.spec.containers[0].imagePullPolicy).to.equal('Always');
    const err = await refusal(validator.admit(request('CREATE', 'pods', pod('a', 'IfNotPresent'))));
    expect(err.message).to.equal('pods "n" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"');
  });

  it('DenyServiceExternalIPs lets an update keep or drop addresses, not add one', async () => {
    const plugin = new DenyServiceExternalIPs();
    const svc = (...ips: string[]) => ({ spec: { externalIPs: ips } });
    await plugin.admit(request('UPDATE', 'services', svc('1.1.1.1'), svc('1.1.1.1', '2.2.2.2')));
    await plugin.admit(request('CREATE', 'services', svc()));
    expect((await refusal(plugin.admit(request('UPDATE', 'services', svc('3.3.3.3'), svc('1.1.1.1'))))).code).to.equal(403);
  });

  it('signer checks ask for the signer by name, then its domain\'s wildcard', async () => {
    const asked: AuthorizeAttributes[] = [];
    const answer = (allowed: string) => async (_user: unknown, attributes: AuthorizeAttributes) => {
      asked.push(attributes);
      return { decision: attributes.resource?.name === allowed ? 'ALLOW' : 'NO_OPINION' } as never;
    };
    expect(await authorizedForSigner(answer('example.com/*'), USER, 'approve', 'example.com/a')).to.equal(true);
    expect(asked.map((a) => a.resource)).to.deep.equal([
      { verb: 'approve', group: 'certificates.svc.io', version: '*', resource: 'signers', name: 'example.com/a' },
      { verb: 'approve', group: 'certificates.svc.io', version: '*', resource: 'signers', name: 'example.com/*' },
    ]);
    expect(await authorizedForSigner(answer('other/x'), USER, 'sign', 'example.com/a')).to.equal(false);
  });

  it('CertificateSigning asks nothing of a status write that changes neither certificate nor conditions', async () => {
    const plugin = certificateSigning(async () => { throw new Error('asked'); });
    const csr = { spec: { signerName: 'example.com/a' }, status: { conditions: [] } };
    await plugin.admit(request('UPDATE', 'certificatesigningrequests', csr, { spec: csr.spec, status: {} }, { subresource: 'status' }));
  });
});
