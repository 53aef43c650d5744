import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { compactVerify } from 'jose';
import YAML from 'yaml';
import { Cluster, waitFor } from '../lib/cluster.js';
import { asToken } from '../lib/tokens.js';
import { authCounts } from '../lib/metrics.js';
import { StorageClient } from '../../internal/storage/client.js';
import { encodeStored } from '../../internal/storage/objects.js';
import { pkiPaths } from '../../internal/pki/index.js';

const SECRETS = '/api/v1/namespaces/svc-system/secrets';
const CLUSTER_INFO = '/api/v1/namespaces/svc-public/configmaps/cluster-info';

/** A bootstrap token Secret for `<id>.<secret>` with the given string data on top of the defaults. */
const tokenSecret = (id: string, secret: string, data: Record<string, string> = {}, type = 'bootstrap.svc.io/token') => ({
  metadata: { name: `bootstrap-token-${id}` }, type,
  stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', ...data },
});
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('bootstrap tokens: authentication, the bootstrap signer and the token cleaner', function () {
  this.timeout(90_000);
  let c: Cluster;
  before(async () => {
    // Under RBAC, so the controllers work with the permissions the default policy gives the controller-manager.
    c = await new Cluster({ flags: {
      authn: ['--enable-bootstrap-token-auth', '--authorization-mode=RBAC'], authz: ['--authorization-mode=RBAC'],
      'controller-manager': ['--controllers=*,bootstrapsigner,tokencleaner'],
    } }).start();
  });
  after(async () => { await c?.stop(); });

  const create = async (body: unknown) => {
    const res = await c.request('POST', SECRETS, { body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const whoami = (token: string) => c.request('POST', '/apis/authentication.svc.io/v1/selfsubjectreviews',
    { anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' } });
  /** Authenticated: whatever RBAC then decides, the answer is not a 401. */
  const accepted = async (token: string) => (await asToken(c, token)).status !== 401;

  describe('authentication', () => {
    it('a valid token authenticates as system:bootstrap:<id> with its extra groups', async () => {
      await create(tokenSecret('abcdef', '0123456789abcdef', { 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:edge', expiration: rfc3339(Date.now() + 3600_000) }));
      expect(await waitFor(() => accepted('abcdef.0123456789abcdef'), 5000, 50)).to.equal(true);
      const who = await whoami('abcdef.0123456789abcdef');
      expect(who.status).to.equal(201);
      expect(who.body.status.userInfo.username).to.equal('system:bootstrap:abcdef');
      expect(who.body.status.userInfo.groups).to.deep.equal(['system:bootstrappers', 'system:bootstrappers:worker', 'system:bootstrappers:edge', 'system:authenticated']);
    });

    it('a token in a Secret of upstream\'s type bootstrap.kubernetes.io/token authenticates the same way', async () => {
      const made = await create(tokenSecret('upstrm', '0123456789abcdef', {}, 'bootstrap.kubernetes.io/token'));
      expect(made.type).to.equal('bootstrap.kubernetes.io/token');
      expect(await waitFor(() => accepted('upstrm.0123456789abcdef'), 5000, 50)).to.equal(true);
      expect((await whoami('upstrm.0123456789abcdef')).body.status.userInfo.username).to.equal('system:bootstrap:upstrm');
      const invalid = await c.request('POST', SECRETS, { body: tokenSecret('upbad1', 'short', {}, 'bootstrap.kubernetes.io/token') });
      expect(invalid.status, invalid.text).to.equal(422);
      expect(invalid.body.details.causes.map((cause: any) => cause.field)).to.deep.equal(['data[token-secret]']);
    });

    it('a wrong secret, a token id without a Secret and a malformed token are refused', async () => {
      await waitFor(() => accepted('abcdef.0123456789abcdef'), 5000, 50);
      for (const token of ['abcdef.0123456789abcdeX', 'abcdef.fedcba9876543210', 'zzzzzz.0123456789abcdef', 'ABCDEF.0123456789abcdef', 'abcdef0123456789abcdef']) {
        const res = await asToken(c, token);
        expect(res.status, token).to.equal(401);
        expect(res.body).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      }
    });

    it('an expired token is refused', async () => {
      // Written before the cleaner can act on it: refused from the first moment.
      await create(tokenSecret('exp111', 'aaaaaaaaaaaaaaaa', { expiration: rfc3339(Date.now() - 1000) }));
      await create(tokenSecret('live11', 'aaaaaaaaaaaaaaaa'));
      expect(await waitFor(() => accepted('live11.aaaaaaaaaaaaaaaa'), 5000, 50)).to.equal(true); // the mirror is past the expired one
      expect((await asToken(c, 'exp111.aaaaaaaaaaaaaaaa')).status).to.equal(401);
    });

    it('a token whose usage-bootstrap-authentication is false or unset is refused', async () => {
      await create(tokenSecret('nouse1', 'bbbbbbbbbbbbbbbb', { 'usage-bootstrap-authentication': 'false' }));
      const unset = tokenSecret('nouse2', 'bbbbbbbbbbbbbbbb');
      delete (unset.stringData as Record<string, string>)['usage-bootstrap-authentication'];
      await create(unset);
      await create(tokenSecret('check1', 'bbbbbbbbbbbbbbbb'));
      expect(await waitFor(() => accepted('check1.bbbbbbbbbbbbbbbb'), 5000, 50)).to.equal(true);
      expect((await asToken(c, 'nouse1.bbbbbbbbbbbbbbbb')).status).to.equal(401);
      expect((await asToken(c, 'nouse2.bbbbbbbbbbbbbbbb')).status).to.equal(401);
    });

    it('extra groups outside system:bootstrappers: are refused by validation, and a stored one refuses the token', async () => {
      const res = await c.request('POST', SECRETS, { body: tokenSecret('badgrp', 'cccccccccccccccc', { 'auth-extra-groups': 'system:masters' }) });
      expect(res.status).to.equal(422);
      expect(res.body.reason).to.equal('Invalid');
      // Stored behind validation's back (as by an older server): the authenticator still refuses it.
      const storage = new StorageClient(c.addresses.storage);
      try {
        const uid = randomUUID();
        const secret = {
          apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.svc.io/token',
          metadata: { name: 'bootstrap-token-badgrp', namespace: 'svc-system', uid, creationTimestamp: rfc3339(Date.now()) },
          data: Object.fromEntries(Object.entries({ 'token-id': 'badgrp', 'token-secret': 'cccccccccccccccc', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' })
            .map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        };
        await storage.create('core/secrets/svc-system/bootstrap-token-badgrp', encodeStored(secret), uid);
      } finally {
        storage.close();
      }
      expect(await waitFor(async () => (await c.request('GET', `${SECRETS}/bootstrap-token-badgrp`)).status === 200, 5000, 50)).to.equal(true);
      await create(tokenSecret('check2', 'cccccccccccccccc'));
      expect(await waitFor(() => accepted('check2.cccccccccccccccc'), 5000, 50)).to.equal(true);
      expect((await asToken(c, 'badgrp.cccccccccccccccc')).status).to.equal(401);
    });

    it('a token the gateway keeps is refused within 2 s of its Secret turning usage-bootstrap-authentication off', async () => {
      await create(tokenSecret('turnof', 'eeeeeeeeeeeeeeee'));
      expect(await waitFor(() => accepted('turnof.eeeeeeeeeeeeeeee'), 5000, 50)).to.equal(true);
      const before = await authCounts(c);
      expect(await accepted('turnof.eeeeeeeeeeeeeeee')).to.equal(true);
      expect((await authCounts(c)).hits).to.be.above(before.hits);
      const off = await c.request('PATCH', `${SECRETS}/bootstrap-token-turnof`, {
        headers: { 'Content-Type': 'application/merge-patch+json' }, body: { stringData: { 'usage-bootstrap-authentication': 'false' } },
      });
      expect(off.status, off.text).to.equal(200);
      expect(await waitFor(async () => !(await accepted('turnof.eeeeeeeeeeeeeeee')), 2000, 20)).to.equal(true);
    });

    it('deleting the Secret revokes the token within a second', async () => {
      await create(tokenSecret('revoke', 'dddddddddddddddd'));
      expect(await waitFor(() => accepted('revoke.dddddddddddddddd'), 5000, 50)).to.equal(true);
      expect((await c.request('DELETE', `${SECRETS}/bootstrap-token-revoke`)).status).to.equal(200);
      expect(await waitFor(async () => !(await accepted('revoke.dddddddddddddddd')), 1000, 20)).to.equal(true);
    });
  });

  describe('the bootstrap signer', () => {
    const clusterInfo = async () => (await c.request('GET', CLUSTER_INFO)).body;
    const signatureOf = async (id: string) => (await clusterInfo())?.data?.[`jws-kubeconfig-${id}`] as string | undefined;

    it('creates cluster-info with a kubeconfig that carries the CA', async () => {
      expect(await waitFor(async () => (await c.request('GET', CLUSTER_INFO)).status === 200, 10_000)).to.equal(true);
      const kubeconfig = YAML.parse((await clusterInfo()).data.kubeconfig);
      const cluster = kubeconfig.clusters[0].cluster;
      expect(Buffer.from(cluster['certificate-authority-data'], 'base64').toString()).to.equal(readFileSync(pkiPaths(c.dataDir).caCert, 'utf8'));
      expect(cluster.server).to.equal(`https://127.0.0.1:${c.port}`);
      expect(kubeconfig.users ?? []).to.deep.equal([]);
    });

    it('signs the kubeconfig with each signing token: a detached HS256 JWS that verifies with the token', async () => {
      await create(tokenSecret('sign01', 'eeeeeeeeeeeeeeee', { 'usage-bootstrap-signing': 'true' }));
      expect(await waitFor(async () => Boolean(await signatureOf('sign01')), 10_000)).to.equal(true);
      const info = await clusterInfo();
      const [header, payload, signature] = (info.data['jws-kubeconfig-sign01'] as string).split('.');
      expect(payload).to.equal('');
      const jws = `${header}.${Buffer.from(info.data.kubeconfig).toString('base64url')}.${signature}`;
      const verified = await compactVerify(jws, Buffer.from('sign01.eeeeeeeeeeeeeeee'), { algorithms: ['HS256'] });
      expect(Buffer.from(verified.payload).toString()).to.equal(info.data.kubeconfig);
      expect(verified.protectedHeader).to.deep.equal({ alg: 'HS256', kid: 'sign01' });
      let wrongKey = false;
      await compactVerify(jws, Buffer.from('sign01.ffffffffffffffff'), { algorithms: ['HS256'] }).catch(() => { wrongKey = true; });
      expect(wrongKey).to.equal(true);
    });

    it('signs with a token of upstream\'s type bootstrap.kubernetes.io/token', async () => {
      await create(tokenSecret('upsig1', 'eeeeeeeeeeeeeeee', { 'usage-bootstrap-signing': 'true' }, 'bootstrap.kubernetes.io/token'));
      expect(await waitFor(async () => Boolean(await signatureOf('upsig1')), 10_000)).to.equal(true);
      await c.request('DELETE', `${SECRETS}/bootstrap-token-upsig1`);
      expect(await waitFor(async () => (await signatureOf('upsig1')) === undefined, 10_000)).to.equal(true);
    });

    it('ignores tokens not meant for signing or expired, and removes signatures of tokens gone', async () => {
      await create(tokenSecret('nosig1', 'gggggggggggggggg'));
      await create(tokenSecret('soon01', 'hhhhhhhhhhhhhhhh', { 'usage-bootstrap-signing': 'true', expiration: rfc3339(Date.now() + 4000) }));
      expect(await waitFor(async () => Boolean(await signatureOf('soon01')), 10_000)).to.equal(true);
      expect(await signatureOf('nosig1')).to.equal(undefined);
      expect(await waitFor(async () => (await signatureOf('soon01')) === undefined, 15_000)).to.equal(true);
      await c.request('DELETE', `${SECRETS}/bootstrap-token-sign01`);
      expect(await waitFor(async () => (await signatureOf('sign01')) === undefined, 10_000)).to.equal(true);
      expect((await clusterInfo()).data).to.have.property('kubeconfig');
    });
  });

  describe('the token cleaner', () => {
    it('deletes a Secret whose token has expired, and one when its expiration comes', async () => {
      await create(tokenSecret('old001', 'iiiiiiiiiiiiiiii', { expiration: rfc3339(Date.now() - 60_000) }));
      await create(tokenSecret('later1', 'jjjjjjjjjjjjjjjj', { expiration: rfc3339(Date.now() + 3000) }));
      await create(tokenSecret('keep01', 'kkkkkkkkkkkkkkkk'));
      await create(tokenSecret('old002', 'iiiiiiiiiiiiiiii', { expiration: rfc3339(Date.now() - 60_000) }, 'bootstrap.kubernetes.io/token'));
      // Not a bootstrap token: an expiration in its data means nothing.
      await create({ metadata: { name: 'bootstrap-token-opaque' }, stringData: { expiration: rfc3339(Date.now() - 60_000) } });
      const gone = (name: string) => async () => (await c.request('GET', `${SECRETS}/bootstrap-token-${name}`)).status === 404;
      expect(await waitFor(gone('old001'), 10_000)).to.equal(true);
      expect(await waitFor(gone('old002'), 10_000)).to.equal(true);
      expect((await c.request('GET', `${SECRETS}/bootstrap-token-opaque`)).status).to.equal(200);
      expect((await c.request('GET', `${SECRETS}/bootstrap-token-later1`)).status).to.equal(200);
      expect(await waitFor(gone('later1'), 15_000)).to.equal(true);
      expect((await c.request('GET', `${SECRETS}/bootstrap-token-keep01`)).status).to.equal(200);
    });
  });
});
