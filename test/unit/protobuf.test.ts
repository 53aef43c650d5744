import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  decodeEnvelope, decodeObject, decodeWatchEvents, encodeEnvelope, encodeObject, encodeWatchEvent, listItemEncoder, listParts, messageNameFor,
  ProtobufError,
} from '../../internal/apimachinery/protobuf/index.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { formatDuration, parseDuration } from '../../internal/apimachinery/protobuf/time.js';
import { pointerKey, ZERO_MEANINGFUL_POINTERS } from '../../internal/apimachinery/protobuf/pointers.js';
import { DOMAIN, UPSTREAM_DOMAIN } from '../../internal/names/index.js';
import { sharedDir } from '../../internal/config/shared.js';

const VECTORS = join(sharedDir(), 'protobuf', 'vectors');
const WATCH_EVENT = `${DOMAIN}.apimachinery.pkg.apis.meta.v1.WatchEvent`;
/** The vectors whose envelope leaves the type empty, by the message they hold. */
const UNTYPED: Record<string, string> = { 'core.v1.WatchEvent': WATCH_EVENT };

const vectors = readdirSync(VECTORS).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).sort();

describe('protobuf vectors', () => {
  it('are all there', () => expect(vectors.length).to.be.greaterThan(80));

  for (const name of vectors) {
    it(`${name} round-trips`, () => {
      const json = JSON.parse(readFileSync(join(VECTORS, `${name}.json`), 'utf8'));
      const pb = readFileSync(join(VECTORS, `${name}.pb`));
      expect(encodeEnvelope(json, UNTYPED[name]).toString('hex')).to.equal(pb.toString('hex'));
      expect(decodeEnvelope(pb, UNTYPED[name])).to.deep.equal(json);
    });
  }
});

describe('protobuf envelope', () => {
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } };

  it('maps kinds to messages', () => {
    expect(messageNameFor('v1', 'Pod')).to.equal(`${DOMAIN}.api.core.v1.Pod`);
    expect(messageNameFor('v1', 'PodList')).to.equal(`${DOMAIN}.api.core.v1.PodList`);
    expect(messageNameFor('apps/v1', 'Deployment')).to.equal(`${DOMAIN}.api.apps.v1.Deployment`);
    expect(messageNameFor(`rbac.authorization.${DOMAIN}/v1`, 'ClusterRole')).to.equal(`${DOMAIN}.api.rbac.v1.ClusterRole`);
    expect(messageNameFor(`internal.apiserver.${DOMAIN}/v1alpha1`, 'StorageVersion'))
      .to.equal(`${DOMAIN}.api.apiserverinternal.v1alpha1.StorageVersion`);
    expect(messageNameFor('v1', 'Status')).to.equal(`${DOMAIN}.apimachinery.pkg.apis.meta.v1.Status`);
    expect(messageNameFor('batch/v1', 'DeleteOptions')).to.equal(`${DOMAIN}.apimachinery.pkg.apis.meta.v1.DeleteOptions`);
    expect(messageNameFor(`meta.${DOMAIN}/v1`, 'PartialObjectMetadataList'))
      .to.equal(`${DOMAIN}.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList`);
    expect(messageNameFor(`meta.${DOMAIN}/v1`, 'Table')).to.equal(undefined);
    expect(messageNameFor(`meta.${UPSTREAM_DOMAIN}/v1`, 'DeleteOptions')).to.equal(`${DOMAIN}.apimachinery.pkg.apis.meta.v1.DeleteOptions`);
  });

  it('has no message for custom resources or unknown kinds', () => {
    expect(messageNameFor('example.com/v1', 'Widget')).to.equal(undefined);
    expect(messageNameFor('example.com/v1', 'Status')).to.equal(undefined);
    expect(messageNameFor('v1', 'Widget')).to.equal(undefined);
    expect(messageNameFor('', 'Pod')).to.equal(undefined);
  });

  it('rejects data without the prefix as a bad request', () => {
    const bytes = encodeEnvelope(configMap);
    bytes[0] = 0x7b;
    expect(() => decodeEnvelope(bytes)).to.throw(ProtobufError, /prefix/);
    try {
      decodeEnvelope(Buffer.from('{}'));
      expect.fail('decoded JSON as Protobuf');
    } catch (e) {
      expect(e).to.be.instanceOf(StatusError);
      expect((e as StatusError).code).to.equal(400);
    }
  });

  it('rejects truncated data', () => {
    const bytes = encodeEnvelope(configMap);
    for (const cut of [5, 10, bytes.length - 3, bytes.length - 1]) {
      expect(() => decodeEnvelope(bytes.subarray(0, cut)), `cut at ${cut}`).to.throw(ProtobufError, /truncated/);
    }
  });

  it('rejects unknown kinds both ways', () => {
    expect(() => encodeEnvelope({ apiVersion: 'example.com/v1', kind: 'Widget' })).to.throw(ProtobufError, /Widget/);
    const bytes = encodeEnvelope(configMap);
    const forged = Buffer.from(bytes.toString('latin1').replace('ConfigMap', 'ConfigMop'), 'latin1');
    expect(() => decodeEnvelope(forged)).to.throw(ProtobufError, /ConfigMop/);
  });
});

describe('protobuf pointer fields', () => {
  it('name messages and fields of the table (each in at least one version)', () => {
    const messages = JSON.parse(readFileSync(join(sharedDir(), 'protobuf', 'messages.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    for (const [key, fields] of Object.entries(ZERO_MEANINGFUL_POINTERS)) {
      const versions = Object.keys(messages).filter((name) => pointerKey(name) === key && name.startsWith(`${DOMAIN}.api.`));
      expect(versions, key).to.not.be.empty;
      for (const f of fields) expect(versions.some((v) => f in messages[v]), `${key}.${f}`).to.equal(true);
    }
  });
});

describe('protobuf special types', () => {
  const roundTrip = (obj: Record<string, unknown>, message: string) => decodeObject(encodeObject(obj, message), message);
  const core = (kind: string) => `${DOMAIN}.api.core.v1.${kind}`;

  it('keeps int-or-string ports as numbers or names', () => {
    const ports = [{ port: 80, targetPort: 8080 }, { port: 443, targetPort: 'https', protocol: 'TCP' }];
    expect(roundTrip({ ports }, core('ServiceSpec'))).to.deep.equal({ ports });
  });

  it('keeps quantities, times and micro times', () => {
    const resources = { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '1' } };
    expect(roundTrip({ resources }, core('Container'))).to.deep.equal({ resources });
    const event = { eventTime: '2024-02-29T23:59:58.123456Z', firstTimestamp: '1969-07-20T20:17:40Z' };
    expect(roundTrip(event, core('Event'))).to.deep.equal(event);
  });

  it('reads times with offsets and fractions as UTC', () => {
    const decoded = roundTrip({ metadata: { creationTimestamp: '2024-01-01T02:00:00.5+02:00' } }, core('Pod'));
    expect(decoded).to.deep.equal({ metadata: { creationTimestamp: '2024-01-01T00:00:00Z' } });
  });

  it('writes set zero values and reads zero values of optional fields as absent, but for pointers whose zero means something', () => {
    const spec = { replicas: 0, paused: false, selector: {}, template: {} };
    const bytes = encodeObject(spec, `${DOMAIN}.api.apps.v1.DeploymentSpec`);
    expect(bytes.toString('hex')).to.equal('0800' + '1200' + '1a00' + '3800');
    expect(decodeObject(bytes, `${DOMAIN}.api.apps.v1.DeploymentSpec`)).to.deep.equal({ replicas: 0, selector: {}, template: {} });
    const pod = { terminationGracePeriodSeconds: 0, automountServiceAccountToken: false, securityContext: { runAsUser: 0 }, hostNetwork: false };
    expect(roundTrip(pod, core('PodSpec'))).to.deep.equal({ terminationGracePeriodSeconds: 0, automountServiceAccountToken: false, securityContext: { runAsUser: 0 } });
    expect(roundTrip({ storageClassName: '' }, core('PersistentVolumeClaimSpec'))).to.deep.equal({ storageClassName: '' });
    const port = { port: 80, targetPort: 0, protocol: '' };
    expect(decodeObject(encodeObject(port, core('ServicePort')), core('ServicePort'))).to.deep.equal({ port: 80 });
  });

  it('keeps zero values of required fields', () => {
    const status = { name: 'c', ready: false, restartCount: 0, image: 'i', imageID: '' };
    expect(roundTrip(status, core('ContainerStatus'))).to.deep.equal(status);
  });

  it('keeps empty strings in maps and lists', () => {
    const meta = { labels: { a: '' }, finalizers: [''] };
    expect(roundTrip({ metadata: meta }, core('Pod'))).to.deep.equal({ metadata: meta });
  });

  it('inlines embedded structs and renames fields as JSON does', () => {
    const volumes = [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } }];
    const probe = { httpGet: { path: '/', port: 'http' }, periodSeconds: 3 };
    const spec = { volumes, containers: [{ name: 'c', livenessProbe: probe }] };
    expect(roundTrip(spec, core('PodSpec'))).to.deep.equal(spec);
  });

  it('encodes negative and 64-bit integers', () => {
    const meta = { generation: 2 ** 40, deletionGracePeriodSeconds: -1 };
    expect(roundTrip({ metadata: meta }, core('Pod'))).to.deep.equal({ metadata: meta });
  });

  it('keeps byte fields as base64 and non-ASCII text', () => {
    const secret = { data: { 'tls.key': Buffer.from([0, 1, 254, 255]).toString('base64') },
      metadata: { annotations: { note: 'größe ✓ '.repeat(30), short: 'ü' } } };
    expect(roundTrip(secret, core('Secret'))).to.deep.equal(secret);
  });

  it('keeps managed fields as JSON', () => {
    const fieldsV1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } };
    const meta = { managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1 }] };
    expect(roundTrip({ metadata: meta }, core('Pod'))).to.deep.equal({ metadata: meta });
  });

  it('writes managed fields as the UTF-8 bytes of their JSON text, short, long and non-ASCII', () => {
    const varint = (n: number) => (n < 128 ? [n] : [(n & 127) | 128, n >> 7]);
    for (const fieldsV1 of [{ 'f:a': {} }, { 'f:metadata': { 'f:labels': { 'f:größe': {}, [`f:${'x'.repeat(200)}`]: {} } } }]) {
      const bytes = encodeObject({ metadata: { managedFields: [{ manager: 'm', fieldsType: 'FieldsV1', fieldsV1 }] } }, core('Pod'));
      const text = Buffer.from(JSON.stringify(fieldsV1));
      expect(bytes.includes(Buffer.concat([Buffer.from(varint(text.length)), text])), JSON.stringify(fieldsV1)).to.equal(true);
    }
  });

  it('keeps verbs and extra values as plain arrays', () => {
    const resource = { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'] };
    expect(roundTrip(resource, `${DOMAIN}.apimachinery.pkg.apis.meta.v1.APIResource`)).to.deep.equal(resource);
  });

  it('writes lengths of every varint size', () => {
    for (const size of [127, 128, 16_383, 16_384, 2_097_152]) {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { k: 'x'.repeat(size) } };
      expect(decodeEnvelope(encodeEnvelope(cm)), `size ${size}`).to.deep.equal(cm);
    }
  });

  it('reads and writes Go durations', () => {
    const cases: Array<[string, number]> = [['0s', 0], ['1h0m0s', 3600e9], ['1h2m3.5s', 3723.5e9], ['1.5ms', 1.5e6], ['-2m30s', -150e9], ['750ns', 750], ['3µs', 3e3]];
    for (const [text, nanos] of cases) {
      expect(formatDuration(nanos)).to.equal(text);
      expect(parseDuration(text)).to.equal(nanos);
    }
    expect(parseDuration('90m')).to.equal(5400e9);
    expect(() => parseDuration('5 minutes')).to.throw(ProtobufError);
  });

  it('rejects malformed times', () => {
    for (const bad of ['2024-13-01T00:00:00Z', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00', 'yesterday']) {
      expect(() => encodeObject({ metadata: { creationTimestamp: bad } }, core('Pod')), bad).to.throw(ProtobufError, /RFC 3339/);
    }
  });

  it('embeds enveloped objects in raw extensions', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    const list = decodeObject(encodeObject({ items: [encodeEnvelope(pod)] }, core('List')), core('List'));
    expect(list).to.deep.equal({ items: [pod] });
  });
});

describe('protobuf watch frames', () => {
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, resourceVersion: '7' } });

  it('round-trip, one length-prefixed WatchEvent each', () => {
    const frame = encodeWatchEvent('ADDED', pod('a'));
    expect(frame.readUInt32BE(0)).to.equal(frame.length - 4);
    const event = decodeObject(frame.subarray(4), WATCH_EVENT);
    expect(event).to.deep.equal({ type: 'ADDED', object: pod('a') });
    const stream = Buffer.concat([frame, encodeWatchEvent('MODIFIED', pod('b')), encodeWatchEvent('DELETED', pod('c'))]);
    const { events, rest } = decodeWatchEvents(stream.subarray(0, stream.length - 2));
    expect(events).to.deep.equal([{ type: 'ADDED', object: pod('a') }, { type: 'MODIFIED', object: pod('b') }]);
    expect(decodeWatchEvents(Buffer.concat([rest, stream.subarray(stream.length - 2)])).events)
      .to.deep.equal([{ type: 'DELETED', object: pod('c') }]);
  });

  it('hold the object in its envelope', () => {
    const frame = encodeWatchEvent('BOOKMARK', pod('a'));
    expect(frame.indexOf(encodeEnvelope(pod('a')))).to.be.greaterThan(4);
  });
});

describe('protobuf lists written in parts', () => {
  const item = (i: number) => ({ metadata: { name: `cm-${i}`, namespace: 'ns', resourceVersion: String(i + 1) }, data: { k: 'v'.repeat(i * 37 % 300) } });

  for (const count of [0, 1, 3000]) {
    it(`are the bytes of the whole list encoded at once (${count} items)`, () => {
      const items = Array.from({ length: count }, (_, i) => item(i));
      const listMeta = { resourceVersion: '9', continue: 'tok', remainingItemCount: 4 };
      const whole = encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: listMeta, items });
      const encoded = items.map(listItemEncoder('v1', 'ConfigMapList', messageNameFor('v1', 'ConfigMap')!));
      const parts = listParts('v1', 'ConfigMapList', listMeta, encoded);
      expect(parts.length).to.equal(count + 2);
      expect(Buffer.concat(parts).equals(whole)).to.equal(true);
      expect((decodeEnvelope(Buffer.concat(parts)).items as unknown[] | undefined ?? []).length).to.equal(count);
    });
  }

  it('hold each item as its message, framed', () => {
    const obj = item(5);
    const framed = listItemEncoder('v1', 'ConfigMapList', messageNameFor('v1', 'ConfigMap')!)(obj);
    expect(framed.subarray(framed.length - encodeObject(obj, messageNameFor('v1', 'ConfigMap')!).length)
      .equals(encodeObject(obj, messageNameFor('v1', 'ConfigMap')!))).to.equal(true);
    expect(framed[0]).to.equal(0x12); // items: field 2, length-delimited
  });
});
