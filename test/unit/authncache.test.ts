// The gateway's authentication cache and the answers authn makes for it:
// what is kept, for how long, under which key, and what drops it.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { NatsConnection } from '@nats-io/nats-core';
import { AuthenticationCache } from '../../gateway/authncache.js';
import { Lru } from '../../internal/apimachinery/lru.js';
import { DecisionCache } from '../../gateway/decisions.js';
import { NATS_AUTHN_GENERATION_SUBJECT, NATS_AUTHZ_GENERATION_SUBJECT, generationAskSubject } from '../../internal/names/index.js';
import type { AuthorizeRequest } from '../../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse__Output } from '../../internal/rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import {
  AuthenticationChain, BearerTokenAuthenticator, SUCCESS_CACHE_TTL_MS, TokenFileAuthenticator, authenticateHandler, cacheTtl, parseTokenFile,
} from '../../internal/authn/index.js';
import type { AuthenticateRequest } from '../../internal/rpc/gen/svc/authn/v1/AuthenticateRequest.js';
import type { AuthenticateResponse__Output } from '../../internal/rpc/gen/svc/authn/v1/AuthenticateResponse.js';

type Status = { type: string };

/** Enough of a NATS connection for a follower: subscriptions by subject, publish, and status events the test sends. */
class FakeNats {
  readonly subscribers = new Map<string, (err: Error | null, msg: { string(): string }) => void>();
  readonly published: string[] = [];
  private readonly statuses: Array<(s: IteratorResult<Status>) => void> = [];
  /** What the service answers when asked to announce; empty: nobody answers. */
  announce = '';

  constructor(private readonly subject = NATS_AUTHN_GENERATION_SUBJECT) {}

  subscribe(subject: string, opts: { callback: (err: Error | null, msg: { string(): string }) => void }) {
    this.subscribers.set(subject, opts.callback);
    return { unsubscribe: () => this.subscribers.delete(subject) };
  }

  async flush(): Promise<void> {}

  publish(subject: string): void {
    this.published.push(subject);
    if (subject === generationAskSubject(this.subject) && this.announce) this.send(this.announce);
  }

  send(text: string): void {
    this.subscribers.get(this.subject)?.(null, { string: () => text });
  }

  status(): AsyncIterable<Status> {
    return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Status>>((resolve) => this.statuses.push(resolve)) }) };
  }

  emit(type: string): void {
    for (const resolve of this.statuses.splice(0)) resolve({ value: { type }, done: false });
  }
}

const answer = (fields: Partial<AuthenticateResponse__Output> = {}): AuthenticateResponse__Output => ({
  authenticated: true, user: { username: 'alice', uid: '', groups: ['system:authenticated'], extra: {} }, error: '', audiences: [], authenticator: 'token-file',
  warnings: [], credentialHeaders: ['authorization'], cacheTtlMs: 10_000, pathDependent: false, generation: 'e1.0', ...fields,
});

const request = (token?: string, path = '/api', certs: Buffer[] = []): AuthenticateRequest => ({
  headers: token ? [{ name: 'authorization', values: [`Bearer ${token}`] }] : [], peerCertificates: certs, remoteAddress: '127.0.0.1:1', audiences: [], path,
});

describe('gateway authentication cache', () => {
  let nats: FakeNats;
  let now: number;
  let cache: AuthenticationCache;
  let calls: AuthenticateRequest[];
  let next: AuthenticateResponse__Output;
  const ask = async (req: AuthenticateRequest) => { calls.push(req); return next; };

  beforeEach(async () => {
    nats = new FakeNats();
    nats.announce = 'e1.0';
    now = 1_000_000;
    cache = new AuthenticationCache(nats as unknown as NatsConnection, 3, () => now);
    await cache.start();
    calls = [];
    next = answer();
  });
  afterEach(() => cache.close());

  const metrics = async () => {
    const registry = new Registry();
    cache.registerMetrics(registry);
    return registry.metrics();
  };

  it('asks once for repeated credentials, and counts hits and misses under the upstream names', async () => {
    for (let i = 0; i < 3; i++) expect((await cache.authenticate(request('t1'), ask)).user?.username).to.equal('alice');
    expect(calls).to.have.length(1);
    const text = await metrics();
    expect(text).to.include('authentication_token_cache_request_total{status="hit"} 2');
    expect(text).to.include('authentication_token_cache_request_total{status="miss"} 1');
    expect(text).to.include('authentication_token_cache_fetch_total{status="ok"} 1');
  });

  it('keys by the credentials: another token, client chain or set of header names asks again', async () => {
    await cache.authenticate(request('t1'), ask);
    await cache.authenticate(request('t2'), ask);
    await cache.authenticate(request('t1', '/api', [Buffer.from('cert')]), ask);
    await cache.authenticate(request('t1', '/apis'), ask);
    expect(calls).to.have.length(3);
    // A header that may name a proxied identity: the answer says to drop it, so it is asked for.
    const spoofing = request('t1');
    spoofing.headers!.push({ name: 'x-remote-user', values: ['admin'] });
    await cache.authenticate(spoofing, ask);
    expect(calls).to.have.length(4);
  });

  it('never holds a token in its keys', async () => {
    await cache.authenticate(request('very-secret-token'), ask);
    const keys = [...(cache as unknown as { entries: Lru<unknown> }).entries].map(([key]) => key);
    expect(keys).to.have.length(1);
    expect(keys[0]).to.not.include('very-secret-token');
  });

  it('keeps an answer for the TTL it came with, and no refusal at all', async () => {
    next = answer({ cacheTtlMs: 3000 });
    await cache.authenticate(request('t1'), ask);
    now += 2999;
    await cache.authenticate(request('t1'), ask);
    expect(calls).to.have.length(1);
    now += 1;
    await cache.authenticate(request('t1'), ask);
    expect(calls).to.have.length(2);
    next = answer({ authenticated: false, user: null, error: 'invalid bearer token' });
    await cache.authenticate(request('bad'), ask);
    await cache.authenticate(request('bad'), ask);
    next = answer({ cacheTtlMs: 0 });
    await cache.authenticate(request('proxy'), ask);
    await cache.authenticate(request('proxy'), ask);
    expect(calls).to.have.length(6);
  });

  it('drops everything on a newer generation, and keeps no answer made before the newest one', async () => {
    await cache.authenticate(request('t1'), ask);
    nats.send('e1.1');
    await cache.authenticate(request('t1'), ask); // made at e1.0: older than e1.1, not kept
    await cache.authenticate(request('t1'), ask);
    expect(calls).to.have.length(3);
    next = answer({ generation: 'e1.1' });
    await cache.authenticate(request('t1'), ask);
    await cache.authenticate(request('t1'), ask);
    expect(calls).to.have.length(4);
    nats.send('e1.1'); // the same generation again: nothing drops
    await cache.authenticate(request('t1'), ask);
    expect(calls).to.have.length(4);
  });

  it('keeps nothing while the service\'s announcements are not heard, or while NATS is down', async () => {
    const silent = new FakeNats();
    const unheard = new AuthenticationCache(silent as unknown as NatsConnection, 10, () => now);
    await unheard.start();
    await unheard.authenticate(request('t1'), ask);
    await unheard.authenticate(request('t1'), ask);
    expect(calls).to.have.length(2);
    silent.send('e1.0');
    await unheard.authenticate(request('t1'), ask);
    await unheard.authenticate(request('t1'), ask);
    expect(calls).to.have.length(3);
    unheard.close();

    await cache.authenticate(request('t2'), ask);
    nats.emit('disconnect');
    await new Promise((resolve) => setImmediate(resolve));
    await cache.authenticate(request('t2'), ask);
    await cache.authenticate(request('t2'), ask);
    expect(calls).to.have.length(6);
  });

  it('keeps anonymous answers that depend on the path per path', async () => {
    next = answer({ pathDependent: true, user: { username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} } });
    await cache.authenticate(request(undefined, '/healthz'), ask);
    await cache.authenticate(request(undefined, '/healthz'), ask);
    expect(calls).to.have.length(1);
    next = answer({ authenticated: false, user: null, error: 'no credentials provided and anonymous access is disabled' });
    expect((await cache.authenticate(request(undefined, '/api'), ask)).authenticated).to.equal(false);
    expect(calls).to.have.length(2);
  });

  it('holds at most its maximum of entries, dropping the least recently used', async () => {
    for (const token of ['a', 'b', 'c']) await cache.authenticate(request(token), ask);
    await cache.authenticate(request('a'), ask);
    await cache.authenticate(request('d'), ask); // b goes
    expect(cache.size).to.equal(3);
    await cache.authenticate(request('a'), ask);
    await cache.authenticate(request('c'), ask);
    expect(calls).to.have.length(4);
    await cache.authenticate(request('b'), ask);
    expect(calls).to.have.length(5);
  });

  it('shares one call among concurrent requests with the same credentials', async () => {
    let release!: () => void;
    const slow = async (req: AuthenticateRequest) => { calls.push(req); await new Promise<void>((r) => { release = r; }); return next; };
    const all = Promise.all([1, 2, 3].map(() => cache.authenticate(request('t1'), slow)));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect((await all).map((r) => r.user?.username)).to.deep.equal(['alice', 'alice', 'alice']);
    expect(calls).to.have.length(1);
  });
});

describe('authn answers for the gateway cache', () => {
  const tokens = new TokenFileAuthenticator(parseTokenFile('tok,alice,uid-a\n', 'tokens.csv').tokens);
  const chain = new AuthenticationChain([new BearerTokenAuthenticator([tokens])], true);
  const req = (authorization?: string) => ({
    headers: authorization ? [{ name: 'authorization', values: [authorization] }] : [], peerCertificates: [], remoteAddress: '', audiences: [], path: '/api',
  });

  it('may be kept for ten seconds at the announced generation; nothing is kept while none is announced', async () => {
    const kept = await authenticateHandler(chain, undefined, undefined, { current: () => 'e.4' })(req('Bearer tok'));
    expect(kept).to.include({ authenticated: true, cacheTtlMs: SUCCESS_CACHE_TTL_MS, generation: 'e.4', pathDependent: false });
    const unannounced = await authenticateHandler(chain)(req('Bearer tok'));
    expect(unannounced).to.include({ authenticated: true, cacheTtlMs: 0, generation: '' });
    const refused = await authenticateHandler(chain, undefined, undefined, { current: () => 'e.4' })(req('Bearer nope'));
    expect(refused).to.include({ authenticated: false, cacheTtlMs: 0 });
  });

  it('anonymous answers limited to some paths say so', async () => {
    const limited = new AuthenticationChain([], true, ['/healthz']);
    const res = await authenticateHandler(limited, undefined, undefined, { current: () => 'e.1' })({ ...req(), path: '/healthz' });
    expect(res).to.include({ authenticated: true, pathDependent: true });
  });

  it('never past the credential\'s expiry, and never for an authenticating proxy\'s identity', () => {
    const found = { user: { username: 'u', uid: '', groups: [], extra: {} }, audiences: [], authenticator: 'x' };
    const credentials = { headers: new Map(), peerCertificates: [], remoteAddress: '', audiences: [], path: '' };
    expect(cacheTtl(found, credentials, 0)).to.equal(SUCCESS_CACHE_TTL_MS);
    expect(cacheTtl({ ...found, expiresAt: 2500 }, credentials, 0)).to.equal(2500);
    expect(cacheTtl({ ...found, expiresAt: 100 }, credentials, 200)).to.equal(0);
    expect(cacheTtl(found, { ...credentials, uncacheable: true }, 0)).to.equal(0);
  });
});

describe('gateway decision cache', () => {
  const decision = (fields: Partial<AuthorizeResponse__Output> = {}) =>
    ({ decision: 'ALLOW', reason: '', evaluationError: '', validity: 'UNTIL_GENERATION', ttlMs: 0, generation: 'z1.0', ...fields }) as unknown as AuthorizeResponse__Output;
  const attributes = { user: { username: 'bob', uid: '', groups: [], extra: {} }, verb: 'get' } as unknown as AuthorizeRequest;

  it('asks once for a repeated request while the generation holds; a new one drops what it may turn', async () => {
    const nats = new FakeNats(NATS_AUTHZ_GENERATION_SUBJECT);
    nats.announce = 'z1.0';
    const cache = new DecisionCache(nats as unknown as NatsConnection);
    await cache.start();
    let asked = 0;
    let next = decision();
    const ask = async () => { asked++; return next; };
    for (let i = 0; i < 3; i++) await cache.authorize(attributes, ask);
    expect(asked).to.equal(1);
    nats.send('z1.1');
    next = decision({ generation: 'z1.1' });
    await cache.authorize(attributes, ask);
    await cache.authorize(attributes, ask);
    expect(asked).to.equal(2);
    cache.close();
  });

  it('keeps the decisions of one replica of the service while another announces its own generation', async () => {
    const nats = new FakeNats(NATS_AUTHZ_GENERATION_SUBJECT);
    nats.announce = 'z1.0';
    const cache = new DecisionCache(nats as unknown as NatsConnection);
    await cache.start();
    let asked = 0;
    let next = decision();
    const ask = async () => { asked++; return next; };
    await cache.authorize(attributes, ask);
    // The other replica's process: a new one drops everything once, its repeated announcements nothing.
    nats.send('y7.3');
    await cache.authorize(attributes, ask);
    for (let i = 0; i < 3; i++) {
      nats.send('y7.3');
      nats.send('z1.0');
      await cache.authorize(attributes, ask);
    }
    expect(asked).to.equal(2);
    // Either one's counter moving drops what it may turn.
    nats.send('y7.4');
    await cache.authorize(attributes, ask);
    expect(asked).to.equal(3);
    // An answer of a generation its process has left behind is not kept.
    nats.send('z1.1');
    await cache.authorize(attributes, ask);
    await cache.authorize(attributes, ask);
    expect(asked).to.equal(5);
    cache.close();
  });

  it('keeps a decision that holds for any name without the name; another is kept per name', async () => {
    const nats = new FakeNats(NATS_AUTHZ_GENERATION_SUBJECT);
    nats.announce = 'z1.0';
    const cache = new DecisionCache(nats as unknown as NatsConnection);
    await cache.start();
    const get = (name: string, verb = 'get') => ({ ...attributes, resource: { namespace: 'ns', verb, group: '', version: 'v1', resource: 'configmaps', subresource: '', name, fieldSelector: '', labelSelector: '' } }) as AuthorizeRequest;
    const asked: string[] = [];
    const ask = (anyName: boolean) => async (r: AuthorizeRequest) => { asked.push(`${r.resource!.verb} ${r.resource!.name}`); return decision({ anyName }); };
    for (const name of ['a', 'b', 'c']) await cache.authorize(get(name), ask(true));
    expect(asked).to.deep.equal(['get a']);
    await cache.authorize(get('a', 'delete'), ask(false));
    await cache.authorize(get('b', 'delete'), ask(false));
    await cache.authorize(get('a', 'delete'), ask(false));
    expect(asked).to.deep.equal(['get a', 'delete a', 'delete b']);
    cache.close();
  });

  it('keeps nothing before the service\'s announcements are heard', async () => {
    const cache = new DecisionCache(new FakeNats(NATS_AUTHZ_GENERATION_SUBJECT) as unknown as NatsConnection);
    await cache.start();
    let asked = 0;
    for (let i = 0; i < 2; i++) await cache.authorize(attributes, async () => { asked++; return decision(); });
    expect(asked).to.equal(2);
    cache.close();
  });
});
