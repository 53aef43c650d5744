import { expect } from 'chai';
import { requestInfo, withoutUpstreamNames } from '../../gateway/requestinfo.js';
import { ownGroup, upstreamGroup } from '../../internal/names/index.js';
import { encodeJson, negotiate, parseAccept } from '../../gateway/negotiation.js';
import { decodeContinue, encodeContinue, listPlan, getPlan } from '../../gateway/versions.js';
import { duplicateJsonFields, parseYamlWithDuplicates, fieldValidationOf } from '../../gateway/fieldvalidation.js';
import { parseLabelSelector, parseFieldSelector, fieldsMatch, formatLabelSelector } from '../../internal/apimachinery/selectors.js';
import { StatusError, invalid, success } from '../../internal/apimachinery/status.js';

const q = (s = '') => new URLSearchParams(s);
const status = (fn: () => unknown): number => {
  try { fn(); } catch (err) { return (err as StatusError).code; }
  return 0;
};

describe('request info', () => {
  it('classifies verbs by method, path and watch', () => {
    expect(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q()).verb).to.equal('list');
    expect(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q('watch=true')).verb).to.equal('watch');
    expect(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q('watch=false')).verb).to.equal('list');
    expect(requestInfo('GET', '/api/v1/namespaces/a/configmaps/x', q('watch=1')).verb).to.equal('watch');
    expect(requestInfo('DELETE', '/api/v1/namespaces/a/configmaps', q()).verb).to.equal('deletecollection');
    expect(requestInfo('PUT', '/apis/apps/v1/namespaces/a/deployments/d/scale', q())).to.deep.include({ verb: 'update', group: 'apps', resource: 'deployments', name: 'd', subresource: 'scale', namespace: 'a' });
  });

  it('treats a namespace and its status/finalize as the namespace itself', () => {
    expect(requestInfo('GET', '/api/v1/namespaces/a', q())).to.deep.include({ resource: 'namespaces', name: 'a', namespace: 'a' });
    expect(requestInfo('PUT', '/api/v1/namespaces/a/finalize', q())).to.deep.include({ resource: 'namespaces', name: 'a', subresource: 'finalize' });
  });

  it('serves upstream group names as aliases and leaves other paths non-resource', () => {
    expect(ownGroup('rbac.authorization.k8s.io')).to.equal('rbac.authorization.svc.io');
    expect(requestInfo('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles', q())).to.deep.include({ group: 'rbac.authorization.svc.io', groupAlias: 'rbac.authorization.k8s.io' });
    expect(requestInfo('GET', '/version', q()).isResourceRequest).to.equal(false);
    expect(status(() => requestInfo('GET', '/api/v1/namespaces/%ZZ', q()))).to.equal(400);
  });

  it('without upstream names, an upstream path names an unknown group but for the review groups', () => {
    expect(upstreamGroup('networking.svc.io')).to.equal('networking.k8s.io');
    expect(upstreamGroup('apps')).to.equal('apps');
    const rbac = withoutUpstreamNames(requestInfo('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles', q()));
    expect(rbac.group).to.equal('rbac.authorization.k8s.io');
    expect(rbac).not.to.have.property('groupAlias');
    const review = withoutUpstreamNames(requestInfo('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', q()));
    expect(review).to.deep.include({ group: 'authorization.svc.io', groupAlias: 'authorization.k8s.io' });
    const own = requestInfo('GET', '/apis/rbac.authorization.svc.io/v1/clusterroles', q());
    expect(withoutUpstreamNames(own)).to.equal(own);
  });
});

describe('negotiation', () => {
  it('orders Accept by q-value, keeping the client order for ties', () => {
    expect(parseAccept('a/b;q=0.5, c/d, e/f;q=0.9').map((r) => r.type)).to.deep.equal(['c/d', 'e/f', 'a/b']);
  });

  it('parses a header once: the requests sending it share its ranges, which none can change', () => {
    const header = 'application/json;as=Table;g=meta.svc.io;v=v1, application/json;q=0.9';
    const first = parseAccept(header);
    expect(parseAccept(header)).to.equal(first);
    expect(Object.isFrozen(first)).to.equal(true);
    expect(parseAccept('application/yaml')).to.not.equal(first);
    for (let i = 0; i < 300; i++) parseAccept(`x/y${i}`); // past the bound: forgotten, parsed again, the same ranges
    expect(parseAccept(header)).to.deep.equal(first);
  });

  it('picks the first served type, Tables in either meta group, and 406 otherwise', () => {
    expect(negotiate('text/html, application/yaml', {}).mediaType).to.equal('application/yaml');
    expect(negotiate('application/json;as=Table;g=meta.k8s.io;v=v1', { table: true }).as).to.equal('Table');
    expect(negotiate('application/json;as=Table;g=meta.svc.io;v=v1, application/json', { table: false }).as).to.equal('object');
    expect(negotiate('application/vnd.kubernetes.protobuf, application/json', { protobuf: false }).mediaType).to.equal('application/json');
    expect(status(() => negotiate('application/cbor', { cbor: false }))).to.equal(406);
    expect(negotiate('application/cbor', { cbor: true }).mediaType).to.equal('application/cbor');
    // Metadata views: any serializer, both meta spellings, v1 and v1beta1; Tables only as JSON or YAML; none for a Status.
    expect(negotiate('application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', { protobuf: false }))
      .to.deep.equal({ mediaType: 'application/vnd.kubernetes.protobuf', as: 'PartialObjectMetadata', metaVersion: 'meta.k8s.io/v1' });
    expect(negotiate('application/json;as=PartialObjectMetadataList;g=meta.svc.io;v=v1beta1', {}).metaVersion).to.equal('meta.svc.io/v1beta1');
    expect(status(() => negotiate('application/cbor;as=PartialObjectMetadata;g=meta.svc.io;v=v1', { cbor: false }))).to.equal(406);
    expect(negotiate('application/vnd.svc.protobuf;as=Table;g=meta.svc.io;v=v1, application/json;as=PartialObjectMetadata;g=meta.svc.io;v=v1', { table: true }).as)
      .to.equal('PartialObjectMetadata');
    expect(negotiate('application/json;as=PartialObjectMetadata;g=meta.svc.io;v=v1, application/yaml', { views: false }).mediaType).to.equal('application/yaml');
  });
});

describe('JSON and Status bodies as the platform writes them', () => {
  it('ends every JSON document with a newline and escapes <, >, & and the line separators', () => {
    expect(encodeJson({ a: '<b>&\u2028\u2029' })).to.equal('{"a":"\\u003cb\\u003e\\u0026\\u2028\\u2029"}\n');
    expect(encodeJson({ a: [1] }, true)).to.equal('{\n  "a": [\n    1\n  ]\n}\n');
  });

  it('orders Status, details and causes members, leaving empty ones out', () => {
    const err = new StatusError(422, 'Invalid', 'm', {
      causes: [{ field: 'f', message: 'x', reason: 'R' }, { message: 'only' }], retryAfterSeconds: 0, kind: 'Pod', name: '', group: 'g',
    });
    expect(JSON.stringify(err.toStatus())).to.equal('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"Invalid",'
      + '"details":{"group":"g","kind":"Pod","causes":[{"reason":"R","message":"x","field":"f"},{"message":"only"}]},"code":422}');
    const one = { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.a' };
    const two = { reason: 'FieldValueInvalid', message: 'Invalid value: 1: no', field: 'spec.b' };
    expect(invalid('Job', { group: 'batch', resource: 'jobs' }, 'j', [one]).message).to.equal('Job.batch "j" is invalid: spec.a: Required value');
    expect(invalid('Job', { group: 'batch', resource: 'jobs' }, 'j', [one, two, one]).message)
      .to.equal('Job.batch "j" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: no]');
    expect(invalid('Job', { group: 'batch', resource: 'jobs' }, 'j', []).message).to.equal('Job.batch "j" is invalid');
    expect(JSON.stringify(success({ group: '', resource: 'pods' }, 'p', 'u'))).to.equal(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"p","kind":"pods","uid":"u"}}');
  });
});

describe('resource versions and continue tokens', () => {
  it('follows the list table of document 1', () => {
    expect(listPlan(q()).mode).to.equal('MostRecent');
    expect(listPlan(q('resourceVersion=0')).mode).to.equal('Any');
    expect(listPlan(q('resourceVersion=5')).mode).to.equal('NotOlderThan');
    expect(listPlan(q('resourceVersion=5&limit=2')).mode).to.equal('Exact');
    expect(listPlan(q('resourceVersion=5&resourceVersionMatch=Exact')).mode).to.equal('Exact');
    expect(status(() => listPlan(q('resourceVersionMatch=Exact')))).to.equal(400);
    expect(status(() => listPlan(q('resourceVersion=0&resourceVersionMatch=Exact')))).to.equal(400);
    expect(status(() => listPlan(q(`continue=${encodeContinue(3, 'k')}&resourceVersion=4`)))).to.equal(400);
    expect(listPlan(q(`continue=${encodeContinue(3, 'k')}&resourceVersion=0`))).to.deep.include({ mode: 'Exact', revision: 3, continueAfter: 'k' });
    expect(getPlan(q('resourceVersion=7'))).to.deep.equal({ mode: 'NotOlderThan', revision: 7 });
    expect(status(() => getPlan(q('resourceVersion=99999999999999999999')))).to.equal(400);
  });

  it('round-trips continue tokens and refuses tampered ones', () => {
    expect(decodeContinue(encodeContinue(42, 'core/configmaps/a/b'))).to.deep.equal({ revision: 42, start: 'core/configmaps/a/b' });
    expect(status(() => decodeContinue('not-a-token'))).to.equal(400);
    expect(status(() => decodeContinue(Buffer.from('{"v":"meta.svc.io/v1","rv":-1,"start":"x"}').toString('base64url')))).to.equal(400);
  });
});

describe('field validation parsing', () => {
  it('names duplicate JSON keys by path, in lists too', () => {
    expect(duplicateJsonFields('{"a":1,"a":2,"b":{"c":1,"c":2},"l":[{"x":1,"x":2}]}')).to.deep.equal(['a', 'b.c', 'l[0].x']);
    expect(duplicateJsonFields('{"s":"\\"a\\":1","t":{"a":1},"u":{"a":1}}')).to.deep.equal([]);
  });

  it('parses YAML keeping the last of repeated keys, and names them', () => {
    const { value, duplicates } = parseYamlWithDuplicates('data:\n  a: "1"\n  a: "2"\nkind: x\n');
    expect(value).to.deep.equal({ data: { a: '2' }, kind: 'x' });
    expect(duplicates).to.deep.equal(['data.a']);
  });

  it('accepts Ignore, Warn (default) and Strict only', () => {
    expect(fieldValidationOf(q())).to.equal('Warn');
    expect(fieldValidationOf(q('fieldValidation=Strict'))).to.equal('Strict');
    expect(status(() => fieldValidationOf(q('fieldValidation=strict')))).to.equal(400);
  });
});

describe('selectors', () => {
  it('matches every label operator', () => {
    const m = parseLabelSelector('env in (prod,stage),tier!=db,app,!legacy,n>2')!;
    expect(m({ env: 'prod', tier: 'web', app: 'x', n: '3' })).to.equal(true);
    expect(m({ env: 'dev', tier: 'web', app: 'x', n: '3' })).to.equal(false);
    expect(m({ env: 'prod', tier: 'web', app: 'x', legacy: '', n: '3' })).to.equal(false);
    expect(parseLabelSelector('a notin (b)')!({})).to.equal(true);
    expect(status(() => parseLabelSelector('a in (b'))).to.equal(400);
    expect(status(() => parseLabelSelector('-bad-'))).to.equal(400);
  });

  it('parses field selectors with escapes and matches them', () => {
    const reqs = parseFieldSelector('metadata.name=a\\,b,status.phase!=Active');
    expect(reqs).to.deep.equal([{ field: 'metadata.name', op: '=', value: 'a,b' }, { field: 'status.phase', op: '!=', value: 'Active' }]);
    expect(fieldsMatch(reqs, { 'metadata.name': 'a,b', 'status.phase': 'Terminating' })).to.equal(true);
    expect(status(() => parseFieldSelector('nonsense'))).to.equal(400);
  });

  it('formats a LabelSelector object as Scale reports it', () => {
    expect(formatLabelSelector({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['y', 'x'] }, { key: 'd', operator: 'DoesNotExist' }] }))
      .to.equal('a=1,b=2,c in (x,y),!d');
  });
});
