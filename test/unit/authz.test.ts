import { expect } from 'chai';
import {
  AuthzConfigError, UnionAuthorizer, authorizeHandler, buildAuthorizer, verdict, type Attributes, type Authorizer, type Verdict,
} from '../../internal/authz/index.js';
import { AnswerGeneration } from '../../internal/rpc/generation.js';
import type { AuthorizeRequest__Output as AuthorizeRequest } from '../../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';

const context = { storageAddress: '127.0.0.1:1', natsUrl: 'nats://127.0.0.1:1' };

function request(groups: string[], username = 'jane'): AuthorizeRequest {
  return {
    user: { username, uid: '', groups, extra: {} },
    resource: {
      namespace: 'default', verb: 'get', group: '', version: 'v1', resource: 'configmaps', subresource: '', name: 'cm',
      fieldSelector: '', labelSelector: '',
    },
    nonResource: null,
  };
}

const decide = (modes: string[], groups: string[] = ['system:authenticated']) =>
  authorizeHandler(buildAuthorizer(modes, context))(request(groups));

/** An authorizer that answers a fixed verdict and counts its calls. */
class Fixed implements Authorizer {
  calls = 0;
  constructor(private readonly answer: Verdict | Error) {}
  async authorize(): Promise<Verdict> {
    this.calls++;
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

describe('authz', () => {
  describe('modes', () => {
    it('AlwaysAllow allows', async () => {
      expect(await decide(['AlwaysAllow'])).to.deep.include({ decision: 'ALLOW', reason: '', evaluationError: '' });
    });

    it('AlwaysDeny has no opinion with the reason everything is forbidden, so the request is denied', async () => {
      expect(await decide(['AlwaysDeny'])).to.deep.include({ decision: 'NO_OPINION', reason: 'Everything is forbidden.', evaluationError: '' });
    });

    it('asks the modes in the order given', async () => {
      expect((await decide(['AlwaysAllow', 'AlwaysDeny'])).decision).to.equal('ALLOW');
      // AlwaysDeny only has no opinion: a later mode may still allow, as in Kubernetes.
      expect((await decide(['AlwaysDeny', 'AlwaysAllow'])).decision).to.equal('ALLOW');
    });

    it('always allows members of system:masters', async () => {
      expect((await decide(['AlwaysDeny'], ['system:masters', 'system:authenticated'])).decision).to.equal('ALLOW');
    });

    it('does not allow a user merely named like the group', async () => {
      const res = await authorizeHandler(buildAuthorizer(['AlwaysDeny'], context))(request([], 'system:masters'));
      expect(res.decision).to.equal('NO_OPINION');
    });

    it('treats a request without a user as one without groups', async () => {
      const res = await authorizeHandler(buildAuthorizer(['AlwaysDeny'], context))({ ...request([]), user: null });
      expect(res.decision).to.equal('NO_OPINION');
    });

    it('refuses unknown, repeated and missing modes', () => {
      expect(() => buildAuthorizer(['RBAC2'], context)).to.throw(AuthzConfigError, 'authorization-mode "RBAC2" is not a valid mode');
      expect(() => buildAuthorizer(['alwaysallow'], context)).to.throw(AuthzConfigError, 'is not a valid mode');
      expect(() => buildAuthorizer(['AlwaysAllow', 'AlwaysAllow'], context)).to.throw(AuthzConfigError, 'more than once');
      expect(() => buildAuthorizer([], context)).to.throw(AuthzConfigError, 'at least one');
    });
  });

  describe('chain', () => {
    const attributes: Attributes = { user: { username: 'u', uid: '', groups: [], extra: {} } };

    it('stops at the first deny', async () => {
      const later = new Fixed(verdict('ALLOW'));
      const res = await new UnionAuthorizer([new Fixed(verdict('NO_OPINION')), new Fixed(verdict('DENY', 'no way')), later])
        .authorize(attributes);
      expect(res).to.deep.include({ decision: 'DENY', reason: 'no way' });
      expect(later.calls).to.equal(0);
    });

    it('joins the reasons of authorizers without an opinion', async () => {
      const res = await new UnionAuthorizer([new Fixed(verdict('NO_OPINION', 'first')), new Fixed(verdict('NO_OPINION', 'second'))])
        .authorize(attributes);
      expect(res).to.deep.include({ decision: 'NO_OPINION', reason: 'first\nsecond' });
    });

    it('passes over an authorizer that fails and reports its error', async () => {
      const chain = new UnionAuthorizer([new Fixed(new Error('backend down')), new Fixed(verdict('ALLOW'))]);
      const res = await authorizeHandler(chain, new AnswerGeneration())(request([]));
      expect(res).to.deep.include({ decision: 'ALLOW', reason: '', evaluationError: 'backend down' });
      // A failed answer is never kept.
      expect(res).to.include({ validity: 'UNCACHEABLE' });
    });
  });
});
