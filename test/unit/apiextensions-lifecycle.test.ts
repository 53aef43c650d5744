// A CustomResourceDefinition's names as the naming controller decides them, and
// Webhook conversion against a real HTTPS ConversionReview server.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { caBundleValid, webhookConverter } from '../../internal/apiextensions/conversion.js';
import { serviceEndpoint } from '../../internal/apiextensions/conversionservice.js';
import { decideNames } from '../../internal/controllers/crdnames.js';
import { group } from '../../internal/names/index.js';
import { ConversionWebhook } from '../lib/conversionwebhook.js';

const G = 'unit.example.com';

function crd(names: Record<string, unknown>, accepted?: Record<string, unknown>, conversion?: Record<string, unknown>): ApiObject {
  return {
    metadata: { name: `${names.plural}.${G}` },
    spec: { group: G, names: { singular: String(names.kind).toLowerCase(), listKind: `${names.kind}List`, ...names }, ...(conversion ? { conversion } : {}) },
    status: { acceptedNames: accepted ?? { plural: '', kind: '' } },
  } as ApiObject;
}

describe('CRD naming decisions', () => {
  const apples = crd({ plural: 'apples', kind: 'Apple', shortNames: ['ap'] }, { plural: 'apples', singular: 'apple', shortNames: ['ap'], kind: 'Apple', listKind: 'AppleList' });

  it('accepts free names and leaves Established to the establishing step', () => {
    const fresh = crd({ plural: 'pears', kind: 'Pear', categories: ['fruit'] });
    const out = decideNames(fresh, [apples, fresh]);
    expect(out.acceptedNames).to.deep.equal({ plural: 'pears', singular: 'pear', kind: 'Pear', listKind: 'PearList', categories: ['fruit'] });
    expect(out.namesAccepted).to.deep.equal({ type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    expect(out.established).to.deep.equal({ type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' });
  });

  it('refuses each name held in the group, the last conflict naming the condition', () => {
    const clash = crd({ plural: 'pommes', singular: 'apple', kind: 'Apple', listKind: 'PommeList' });
    const out = decideNames(clash, [apples, clash]);
    expect(out.namesAccepted).to.include({ status: 'False', reason: 'KindConflict', message: '"Apple" is already in use' });
    expect(out.acceptedNames).to.deep.equal({ plural: 'pommes', kind: '', listKind: 'PommeList' });
    expect(out.established).to.include({ status: 'False', reason: 'NotAccepted' });
  });

  it('lists every short name in use, and ignores other groups', () => {
    const clash = crd({ plural: 'pears', kind: 'Pear', shortNames: ['ap', 'apples', 'pr'] });
    expect(decideNames(clash, [apples, clash]).namesAccepted).to.include({ reason: 'ShortNamesConflict', message: '["ap" is already in use, "apples" is already in use]' });
    const elsewhere = { ...apples, spec: { ...(apples.spec as object), group: 'other.example.com' } };
    expect(decideNames(clash, [elsewhere, clash]).namesAccepted.status).to.equal('True');
  });

  it('keeps a CRD\'s own accepted names and an Established condition that is True', () => {
    const established = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: 't' };
    const own = { ...apples, status: { ...(apples.status as object), conditions: [established] } } as ApiObject;
    const out = decideNames(own, [own]);
    expect(out.namesAccepted.status).to.equal('True');
    expect(out.established).to.deep.equal(established);
  });
});

describe('Webhook conversion', function () {
  this.timeout(20_000);
  const W = new ConversionWebhook();
  const v1 = `${G}/v1`;
  const v2 = `${G}/v2`;
  const widget = (name: string, apiVersion = v1): ApiObject => ({
    apiVersion, kind: 'Widget', metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'w' }, generation: 3 }, spec: { color: 'red' },
  });
  const withWebhook = (clientConfig: Record<string, unknown>, reviewVersions = ['v1']) =>
    crd({ plural: 'widgets', kind: 'Widget' }, undefined, { strategy: 'Webhook', webhook: { clientConfig: { caBundle: W.caBundle, ...clientConfig }, conversionReviewVersions: reviewVersions } });
  async function failure(clientConfig: Record<string, unknown>, objects = [widget('a')]): Promise<StatusError> {
    try {
      await webhookConverter(withWebhook(clientConfig)).convert(objects, v2);
    } catch (err) {
      expect(err).to.be.instanceOf(StatusError);
      return err as StatusError;
    }
    throw new Error('the conversion succeeded');
  }

  before(async () => { await W.start(['conv.default.svc']); });
  after(async () => { await W.stop(); });

  it('sends the objects not yet in the desired version in one v1 ConversionReview, and keeps the order', async () => {
    const converter = webhookConverter(withWebhook({ url: W.url() }));
    const objects = [widget('a'), widget('b', v2), widget('c')];
    const before = W.reviews.length;
    const out = await converter.convert(objects, v2);
    expect(out.map((o) => [o.metadata!.name, o.apiVersion])).to.deep.equal([['a', v2], ['b', v2], ['c', v2]]);
    expect(out[0].spec).to.deep.equal({ colour: 'red' });
    expect(out[1]).to.equal(objects[1]);
    const { path, review } = W.reviews[before];
    expect(path).to.equal('/convert?timeout=30s');
    expect(review).to.include({ kind: 'ConversionReview', apiVersion: `${group('apiextensions')}/v1` });
    expect(review.request.desiredAPIVersion).to.equal(v2);
    expect(review.request.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(review.request.objects.map((o: ApiObject) => o.metadata!.name)).to.deep.equal(['a', 'c']);
    expect(W.reviews.length).to.equal(before + 1);
    expect(await converter.convert([widget('d', v2)], v2)).to.have.length(1);
    expect(W.reviews.length).to.equal(before + 1);
  });

  it('speaks the first review version it knows of conversionReviewVersions', async () => {
    await webhookConverter(withWebhook({ url: W.url() }, ['v2', 'v1beta1', 'v1'])).convert([widget('a')], v2);
    expect(W.reviews.at(-1)!.review.apiVersion).to.equal(`${group('apiextensions')}/v1beta1`);
    try {
      await webhookConverter(withWebhook({ url: W.url() }, ['v9'])).convert([widget('a')], v2);
      expect.fail('converted');
    } catch (err) {
      expect((err as StatusError).message).to.equal(`conversion webhook for ${G}/v1, Kind=Widget failed: no supported conversion review versions`);
    }
  });

  it('takes labels and annotations from the answer and puts the rest of the metadata back', async () => {
    const [out] = await webhookConverter(withWebhook({ url: W.url('relabel') })).convert([{ ...widget('a'), metadata: { ...widget('a').metadata, annotations: { x: 'y' } } }], v2);
    expect(out.metadata).to.deep.equal({ name: 'a', namespace: 'default', uid: 'uid-a', labels: { app: 'w', converted: 'yes' }, generation: 3 });
  });

  it('answers a 500 Status naming what the webhook got wrong', async () => {
    const prefix = `conversion webhook for ${G}/v1, Kind=Widget`;
    const cases: Array<[string, string]> = [
      ['wrong-uid', `${prefix} failed: expected response.uid="`],
      ['failure', `${prefix} failed: cannot convert a widget today`],
      ['drop', `${prefix} returned 0 objects, expected 1`],
      ['rename', `${prefix} returned invalid object: must have the same name: a != a-renamed`],
      ['not-json', `${prefix} failed: `],
    ];
    for (const [mode, message] of cases) {
      const err = await failure({ url: W.url(mode as never) });
      expect(err.code, mode).to.equal(500);
      expect(err.message, mode).to.contain(message);
      expect(err.toStatus(), mode).to.not.have.property('reason');
    }
  });

  it('words a wrong object of several as the platform does for a list', async () => {
    const err = await failure({ url: W.url('rename') }, [widget('a'), widget('b')]);
    expect(err.message).to.equal(`conversion webhook for ${G}/v1, Kind=Widget returned invalid converted object at index 1: must have the same name: a != a-renamed`);
  });

  it('refuses a webhook whose certificate the caBundle does not trust', async () => {
    const other = new ConversionWebhook();
    await other.start();
    try {
      const err = await failure({ url: W.url(), caBundle: other.caBundle });
      expect(err.message).to.match(/failed: .*certificate/);
    } finally {
      await other.stop();
    }
  });

  it('resolves a service reference to an address and checks the certificate against <service>.<namespace>.svc', async () => {
    const resolved: unknown[] = [];
    const converter = webhookConverter(withWebhook({ service: { namespace: 'default', name: 'conv', path: '/convert', port: 8443 } }), async (ref) => {
      resolved.push(ref);
      return { host: '127.0.0.1', port: W.port };
    });
    const [out] = await converter.convert([widget('a')], v2);
    expect(out.apiVersion).to.equal(v2);
    expect(resolved).to.deep.equal([{ namespace: 'default', name: 'conv', port: 8443 }]);
    const wrongName = webhookConverter(withWebhook({ service: { namespace: 'default', name: 'other', path: '/convert', port: 443 } }), async () => ({ host: '127.0.0.1', port: W.port }));
    try {
      await wrongName.convert([widget('a')], v2);
      expect.fail('converted');
    } catch (err) {
      expect((err as StatusError).message).to.contain('other.default.svc');
    }
  });

  it('a CA bundle that holds no certificate keeps the CRD from being established', () => {
    expect(caBundleValid(withWebhook({ url: W.url() }))).to.equal(true);
    expect(caBundleValid(withWebhook({ url: W.url(), caBundle: Buffer.from('not a certificate').toString('base64') }))).to.equal(false);
    expect(caBundleValid(crd({ plural: 'widgets', kind: 'Widget' }))).to.equal(true);
  });
});

describe('Conversion webhook service references', () => {
  const ref = { namespace: 'default', name: 'conv', port: 443 };
  const service = { spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }, { name: 'other', port: 80 }] } } as ApiObject;
  const slice = (endpoints: unknown[], ports = [{ name: 'https', port: 8443 }]) => ({ ports, endpoints }) as unknown as ApiObject;

  it('leads to a ready endpoint serving the named port', () => {
    const slices = [slice([{ addresses: ['10.0.0.1'], conditions: { ready: false } }, { addresses: ['10.0.0.2'] }]), slice([{ addresses: ['10.0.0.3'] }], [{ name: 'other', port: 80 }])];
    expect(serviceEndpoint(ref, service, slices)).to.deep.equal({ host: '10.0.0.2', port: 8443 });
  });

  it('an ExternalName service leads to its name', () => {
    expect(serviceEndpoint(ref, { spec: { type: 'ExternalName', externalName: 'conv.example.com' } } as ApiObject, [])).to.deep.equal({ host: 'conv.example.com', port: 443 });
  });

  it('says what is missing as the platform does', () => {
    expect(() => serviceEndpoint(ref, undefined, [])).to.throw('service "conv" not found');
    expect(() => serviceEndpoint({ ...ref, port: 9 }, service, [])).to.throw('no service port 9 found for service "conv"');
    expect(() => serviceEndpoint(ref, service, [slice([{ addresses: ['10.0.0.1'], conditions: { ready: false } }])])).to.throw('no endpoints available for service "conv"');
  });
});
