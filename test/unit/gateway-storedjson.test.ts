import { expect } from 'chai';
import { storedJson, storedText } from '../../gateway/storedjson.js';
import { goEscape } from '../../gateway/negotiation.js';
import { encodeJson } from '../../gateway/negotiation.js';
import { decodeValue, encodeStored } from '../../internal/storage/objects.js';
import type { ApiObject } from '../../internal/apimachinery/meta.js';

/** What a get answered before: the stored value decoded, then encoded. */
const decodedThenEncoded = (value: Buffer, revision: number): string => encodeJson(decodeValue(value, revision)).slice(0, -1);

describe('gateway stored JSON', () => {
  const objects: ApiObject[] = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', labels: { x: 'y' } }, data: { k: 'v' } },
    { metadata: {}, spec: { template: { metadata: { name: 'inner' } } }, apiVersion: 'apps/v1', kind: 'Deployment' },
    { spec: { n: 1.5, m: -3, big: 1e21, ok: true, off: false, none: null, list: [1, [2, {}], 'x'] }, metadata: { name: 'b', uid: 'u' } },
    { metadata: { name: 'esc', annotations: { html: '<a href="x">&</a>', ctl: '\u0001\n\t\\"', sep: '\u2028', uni: 'é😀' } } },
    { kind: 'X', metadata: { name: 'n', managedFields: [{ fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } } }] }, data: { '1': 'a', b: 'c' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'é<', labels: { a: '&' } }, data: { k: '>é' } },
    { spec: { x: 'é' }, metadata: { name: 'plain' }, status: { y: '\u2029' } },
  ];

  it('splices the resourceVersion into stored text exactly where decoding and encoding would put it', () => {
    for (const obj of objects) {
      const value = encodeStored(obj);
      expect(storedJson(value, 42)).to.equal(decodedThenEncoded(value, 42));
    }
  });

  it('decodes and encodes text that is not as the server stores it', () => {
    const odd = [
      '{ "metadata": {"name":"a"} }', '{"metadata":{"name":"a","resourceVersion":"3"},"x":1}', '{"x":1}',
      '{"metadata":{"name":"\\u0041"}}', '{"metadata":{"name":"a\\/b"}}', '{"metadata":{},"n":1.0}', '{"metadata":{},"n":1E3}',
      '{"metadata":null}', '{"metadata":{"a":{"resourceVersion":"1"}},"spec":{"metadata":{}}}',
    ];
    for (const text of odd) expect(storedJson(Buffer.from(text), 7)).to.equal(decodedThenEncoded(Buffer.from(text), 7));
  });

  it('knows where the metadata object is in the text, escapes and other characters before it or in it', () => {
    for (const obj of objects) {
      const value = encodeStored(obj);
      const { json, metadata } = storedText(value, 42);
      expect(json).to.equal(decodedThenEncoded(value, 42));
      expect(json.slice(metadata!.start, metadata!.end)).to.equal(goEscape(JSON.stringify(decodeValue(value, 42).metadata)));
    }
  });

  it('knows no metadata place in text it decoded and encoded', () => {
    expect(storedText(Buffer.from('{ "metadata": {"name":"a"} }'), 7).metadata).to.equal(undefined);
  });
});
