import { expect } from 'chai';
import {
  decodeEvent, decodeSubjectToken, encodeEvent, encodeSubjectToken, eventSubject, subscriptionSubject, type StorageEvent,
} from '../../internal/storage/events.js';
import { NATS_EVENTS_PREFIX } from '../../internal/names/index.js';

describe('storage events', () => {
  it('encodes subject tokens so no key segment can break a subject', () => {
    expect(encodeSubjectToken('my-app')).to.equal('my-app');
    expect(encodeSubjectToken('')).to.equal('_');
    expect(encodeSubjectToken('_')).to.equal('%5F');
    expect(encodeSubjectToken('kube-root-ca.crt')).to.equal('kube-root-ca%2Ecrt');
    expect(encodeSubjectToken('a*b>c d%e')).to.equal('a%2Ab%3Ec%20d%25e');
    expect(encodeSubjectToken('system:nodes')).to.equal('system:nodes');
    for (const segment of ['', '_', 'a.b', '*', '>', ' x ', '100%', 'ünï', 'tab\tnew\nline', 'rbac.authorization.svc.io']) {
      const token = encodeSubjectToken(segment);
      expect(token).to.match(/^[A-Za-z0-9:~%_-]+$/);
      expect(decodeSubjectToken(token)).to.equal(segment);
    }
  });

  it('derives event subjects from key segments', () => {
    expect(eventSubject('core/configmaps/ns1/cm.1')).to.equal(`${NATS_EVENTS_PREFIX}.core.configmaps.ns1.cm%2E1`);
    expect(eventSubject('rbac.authorization.svc.io/clusterroles//admin'))
      .to.equal(`${NATS_EVENTS_PREFIX}.rbac%2Eauthorization%2Esvc%2Eio.clusterroles._.admin`);
  });

  it('derives wildcard subjects of collection prefixes', () => {
    expect(subscriptionSubject('')).to.equal(`${NATS_EVENTS_PREFIX}.>`);
    expect(subscriptionSubject('core/configmaps/')).to.equal(`${NATS_EVENTS_PREFIX}.core.configmaps.>`);
    expect(subscriptionSubject('core/configmaps/ns1/')).to.equal(`${NATS_EVENTS_PREFIX}.core.configmaps.ns1.>`);
    expect(subscriptionSubject('core/namespaces//')).to.equal(`${NATS_EVENTS_PREFIX}.core.namespaces._.>`);
    expect(() => subscriptionSubject('core/configmaps')).to.throw(/does not end/);
  });

  it('round-trips Event messages', () => {
    const event: StorageEvent = {
      type: 'DELETE',
      kv: { key: 'core/pods/ns/p', value: Buffer.from('{"a":1}'), modRevision: 2 ** 40 + 7, createRevision: 3, uid: 'u-1' },
      prevKv: { key: 'core/pods/ns/p', value: Buffer.from('{"a":1}'), modRevision: 5, createRevision: 3, uid: 'u-1' },
      revision: 2 ** 40 + 7,
    };
    const decoded = decodeEvent(new Uint8Array(encodeEvent(event)));
    expect(decoded).to.deep.equal(event);
    expect(Buffer.isBuffer(decoded.kv!.value)).to.equal(true);
    expect(decodeEvent(encodeEvent({ type: 'PROGRESS', kv: null, prevKv: null, revision: 9 })))
      .to.deep.equal({ type: 'PROGRESS', kv: null, prevKv: null, revision: 9 });
  });
});
