// A controller's service-account tokens, against an in-memory TokenRequest API:
// the account is made when missing, one request serves concurrent callers, a
// token is renewed once 80% of its granted life has passed, a refused token is
// dropped, and a failed renewal keeps the token in hand until it expires.
import { expect } from 'chai';
import type { ApiClient } from '../../internal/client/index.js';
import { ServiceAccountToken, TOKEN_EXPIRATION_SECONDS } from '../../internal/controllers/credentials.js';

class FakeTokens {
  accounts = new Set<string>();
  calls: string[] = [];
  issued = 0;
  down = false;
  /** What the server grants, in seconds (it may shorten what is asked for). */
  grant?: number;
  client(): ApiClient {
    const answer = (status: number, body?: unknown) => Promise.resolve({ status, body });
    return {
      request: async (method: string, path: string, body: any) => {
        this.calls.push(`${method} ${path}`);
        if (this.down) return answer(503, { message: 'unavailable' });
        if (path.endsWith('/token')) {
          const name = path.split('/')[6];
          if (!this.accounts.has(name)) return answer(404, { message: 'not found' });
          expect(body.kind).to.equal('TokenRequest');
          expect(body.apiVersion).to.equal('authentication.svc.io/v1');
          return answer(201, { spec: { expirationSeconds: this.grant ?? body.spec.expirationSeconds }, status: { token: `t${++this.issued}` } });
        }
        if (this.accounts.has(body.metadata.name)) return answer(409);
        this.accounts.add(body.metadata.name);
        return answer(201, body);
      },
    } as unknown as ApiClient;
  }
}

describe('controllers: service-account credentials', () => {
  let api: FakeTokens;
  let now: number;
  const source = () => new ServiceAccountToken(api.client(), 'svc-system', 'job-controller', () => now);
  const LIFE_MS = TOKEN_EXPIRATION_SECONDS * 1000;
  beforeEach(() => { api = new FakeTokens(); now = Date.UTC(2025, 0, 1); });

  it('makes the missing account, then asks once for a token however many ask at the same time', async () => {
    const tokens = source();
    expect(await Promise.all([tokens.token(), tokens.token(), tokens.token()])).to.deep.equal(['t1', 't1', 't1']);
    expect(api.calls).to.deep.equal([
      'POST /api/v1/namespaces/svc-system/serviceaccounts/job-controller/token',
      'POST /api/v1/namespaces/svc-system/serviceaccounts',
      'POST /api/v1/namespaces/svc-system/serviceaccounts/job-controller/token',
    ]);
    expect(api.accounts).to.deep.equal(new Set(['job-controller']));
  });

  it('keeps a token until 80% of its life has passed, then asks for a new one', async () => {
    const tokens = source();
    expect(await tokens.token()).to.equal('t1');
    now += LIFE_MS * 0.8 - 1;
    expect(await tokens.token()).to.equal('t1');
    now += 1;
    expect(await tokens.token()).to.equal('t2');
  });

  it('renews from the life the server granted, not the one asked for', async () => {
    api.grant = 600;
    const tokens = source();
    expect(await tokens.token()).to.equal('t1');
    now += 480_000;
    expect(await tokens.token()).to.equal('t2');
  });

  it('drops a token obtained before a refused request, not one obtained after it', async () => {
    const tokens = source();
    await tokens.token();
    tokens.reset(now - 1);
    expect(await tokens.token()).to.equal('t1');
    tokens.reset(now);
    expect(await tokens.token()).to.equal('t2');
  });

  it('a failed renewal keeps the token in hand until it expires; then it fails', async () => {
    const tokens = source();
    await tokens.token();
    api.down = true;
    now += LIFE_MS * 0.9;
    expect(await tokens.token()).to.equal('t1');
    now += LIFE_MS * 0.1;
    let failure: Error | undefined;
    await tokens.token().catch((err: Error) => { failure = err; });
    expect(failure?.message).to.match(/^a token for svc-system\/job-controller: 503 unavailable/);
    api.down = false;
    expect(await tokens.token()).to.equal('t2');
  });
});
