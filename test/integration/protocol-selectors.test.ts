// Issue 3 point 4: label selectors (=, ==, !=, in, notin, key, !key) and field
// selectors on list, watch and deletecollection; bad selectors answer 400.
import { expect } from 'chai';
import { Cluster, type Response } from '../lib/cluster.js';

const OBJECTS: Record<string, Record<string, string>> = {
  s1: { env: 'prod', tier: 'web' },
  s2: { env: 'dev', tier: 'web' },
  s3: { env: 'qa' },
  s4: { tier: 'db' },
  s5: {},
};
const ALL = Object.keys(OBJECTS);

/** Each operator with the objects of OBJECTS it selects. */
const LABEL_CASES: Array<[string, string[]]> = [
  ['env=prod', ['s1']],
  ['env==prod', ['s1']],
  ['env!=prod', ['s2', 's3', 's4', 's5']],
  ['env in (prod,dev)', ['s1', 's2']],
  ['env notin (prod,dev)', ['s3', 's4', 's5']],
  ['env', ['s1', 's2', 's3']],
  ['!env', ['s4', 's5']],
  ['env,tier=web', ['s1', 's2']],
  ['tier in (web, db),env notin (dev)', ['s1', 's4']],
  ['', ALL],
];

const FIELD_CASES: Array<[string, string[]]> = [
  ['metadata.name=s1', ['s1']],
  ['metadata.name==s2', ['s2']],
  ['metadata.name!=s1', ['s2', 's3', 's4', 's5']],
  ['metadata.name!=s1,metadata.name!=s2', ['s3', 's4', 's5']],
];

const BAD_LABEL_SELECTORS = ['env in prod', 'env=(x', '=x', 'a b', '-bad-=x', 'env=a=b', 'env in (a b)', 'env in (a,'];
const BAD_FIELD_SELECTORS = ['metadata.name in (s1)', 'metadata.name', '=s1', 'metadata.name~s1'];

const q = (s: string) => encodeURIComponent(s);
const names = (res: Response) => res.body.items.map((i: any) => i.metadata.name).sort();

function expectBadRequest(res: Response, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(400);
  expect(res.body, what).to.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
}

describe('protocol: label and field selectors', function () {
  this.timeout(60_000);
  let c: Cluster;
  const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

  async function populate(ns: string): Promise<void> {
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).to.equal(201);
    for (const [name, labels] of Object.entries(OBJECTS)) {
      expect((await c.request('POST', cms(ns), { body: { metadata: { name, labels }, data: { v: '1' } } })).status).to.equal(201);
    }
  }

  before(async () => {
    c = await new Cluster().start();
    await populate('sel');
  });
  after(async () => { await c?.stop(); });

  describe('list', () => {
    for (const [selector, expected] of LABEL_CASES) {
      it(`labelSelector "${selector}" selects ${expected.join(', ')}`, async () => {
        const res = await c.request('GET', `${cms('sel')}?labelSelector=${q(selector)}`);
        expect(res.status, res.text).to.equal(200);
        expect(names(res)).to.deep.equal(expected);
      });
    }

    for (const [selector, expected] of FIELD_CASES) {
      it(`fieldSelector "${selector}" selects ${expected.join(', ')}`, async () => {
        const res = await c.request('GET', `${cms('sel')}?fieldSelector=${q(selector)}`);
        expect(res.status, res.text).to.equal(200);
        expect(names(res)).to.deep.equal(expected);
      });
    }

    it('fieldSelector metadata.namespace across all namespaces, combined with a label selector', async () => {
      const res = await c.request('GET', `/api/v1/configmaps?fieldSelector=${q('metadata.namespace=sel')}&labelSelector=${q('tier')}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.items.every((i: any) => i.metadata.namespace === 'sel')).to.equal(true);
      expect(names(res)).to.deep.equal(['s1', 's2', 's4']);
    });

    it('a field the kind declares: secrets by type, namespaces by status.phase', async () => {
      for (const [name, type] of [['plain', 'Opaque'], ['custom', 'example.com/custom']]) {
        const res = await c.request('POST', '/api/v1/namespaces/sel/secrets', { body: { metadata: { name }, type, data: {} } });
        expect(res.status, res.text).to.equal(201);
      }
      const secrets = await c.request('GET', `/api/v1/namespaces/sel/secrets?fieldSelector=${q('type=example.com/custom')}`);
      expect(secrets.status, secrets.text).to.equal(200);
      expect(names(secrets)).to.deep.equal(['custom']);
      const active = await c.request('GET', `/api/v1/namespaces?fieldSelector=${q('status.phase=Active')}`);
      expect(names(active)).to.include.members(['default', 'sel']);
      const terminating = await c.request('GET', `/api/v1/namespaces?fieldSelector=${q('status.phase=Terminating')}`);
      expect(names(terminating)).to.deep.equal([]);
    });

    it('a malformed label selector: 400', async () => {
      for (const s of BAD_LABEL_SELECTORS) expectBadRequest(await c.request('GET', `${cms('sel')}?labelSelector=${q(s)}`), s);
    });

    it('a malformed field selector or a field the kind does not declare: 400', async () => {
      for (const s of BAD_FIELD_SELECTORS) expectBadRequest(await c.request('GET', `${cms('sel')}?fieldSelector=${q(s)}`), s);
      for (const s of ['spec.foo=x', 'data.v=1', 'type=Opaque']) {
        const res = await c.request('GET', `${cms('sel')}?fieldSelector=${q(s)}`);
        expectBadRequest(res, s);
        expect(res.body.message, s).to.contain(s.split('=')[0]);
      }
    });
  });

  describe('watch', () => {
    let from = '';
    before(async () => {
      // Touch every object once after `from`: each watch then sees MODIFIED for what it selects.
      from = (await c.request('GET', cms('sel'))).body.metadata.resourceVersion;
      for (const name of ALL) {
        const obj = (await c.request('GET', `${cms('sel')}/${name}`)).body;
        expect((await c.request('PUT', `${cms('sel')}/${name}`, { body: { ...obj, data: { v: '2' } } })).status).to.equal(200);
      }
    });

    it('each label and field selector operator filters the events', async () => {
      const cases = [...LABEL_CASES.map(([s, e]) => ['labelSelector', s, e] as const), ...FIELD_CASES.map(([s, e]) => ['fieldSelector', s, e] as const)];
      const results = await Promise.all(cases.map(([param, s]) =>
        c.watch(`${cms('sel')}?watch=1&resourceVersion=${from}&timeoutSeconds=2&${param}=${q(s)}`, { timeoutMs: 10_000 })));
      cases.forEach(([param, s, expected], i) => {
        const { status, events } = results[i];
        expect(status, `${param} ${s}`).to.equal(200);
        expect(events.every((e) => e.type === 'MODIFIED'), `${param} ${s}: ${events.map((e) => e.type)}`).to.equal(true);
        expect(events.map((e) => e.object.metadata.name).sort(), `${param} "${s}"`).to.deep.equal(expected);
      });
    });

    it('a malformed selector on watch: 400', async () => {
      expectBadRequest(await c.request('GET', `${cms('sel')}?watch=1&labelSelector=${q('env in prod')}`), 'label');
      expectBadRequest(await c.request('GET', `${cms('sel')}?watch=1&fieldSelector=${q('spec.foo=x')}`), 'field');
    });
  });

  describe('deletecollection', () => {
    const cases = [...LABEL_CASES.filter(([s]) => s !== '').map(([s, e]) => ['labelSelector', s, e] as const),
      ...FIELD_CASES.map(([s, e]) => ['fieldSelector', s, e] as const)];
    cases.forEach(([param, selector, expected], i) => {
      it(`${param} "${selector}" deletes ${expected.join(', ')} and leaves the rest`, async () => {
        const ns = `dc-${i}`;
        await populate(ns);
        const res = await c.request('DELETE', `${cms(ns)}?${param}=${q(selector)}`);
        expect(res.status, res.text).to.equal(200);
        const left = await c.request('GET', cms(ns));
        expect(names(left)).to.deep.equal(ALL.filter((n) => !expected.includes(n)));
      });
    });

    it('a malformed selector deletes nothing and answers 400', async () => {
      expectBadRequest(await c.request('DELETE', `${cms('sel')}?labelSelector=${q('env in prod')}`), 'label');
      expectBadRequest(await c.request('DELETE', `${cms('sel')}?fieldSelector=${q('spec.foo=x')}`), 'field');
      expect(names(await c.request('GET', cms('sel')))).to.deep.equal(ALL);
    });
  });
});
