import { expect } from 'chai';
import { addWarning, headerValue, warningValue } from '../../gateway/headers.js';
import { checkContinueWithin, listPlan } from '../../gateway/versions.js';
import { Rng } from '../lib/fuzz/random.js';
import { badRequest, describe as describeRequest } from '../lib/fuzz/http.js';
import { drawCalls } from '../lib/fuzz/grpc.js';
import type { StatusError } from '../../internal/apimachinery/status.js';

/** What a client reads back: Node hands over header bytes as Latin-1 characters. */
const wire = (value: string) => Buffer.from(value, 'latin1').toString('utf8');
const fail = (fn: () => unknown): StatusError | undefined => {
  try { fn(); } catch (err) { return err as StatusError; }
  return undefined;
};

describe('header values that carry request text', () => {
  it('are UTF-8 bytes of the text, each a Latin-1 character, with controls replaced', () => {
    expect(wire(headerValue('bad\u2028field é'))).to.equal('bad\u2028field é');
    expect(headerValue('a\u0000b\nc\u007fd\u0085e')).to.equal(Buffer.from('a\ufffdb\ufffdc\ufffdd\ufffde', 'utf8').toString('latin1'));
    expect(headerValue('plain ascii')).to.equal('plain ascii');
    expect(headerValue('x\u2028y')).to.match(/^[\t\x20-\x7e\x80-\xff]*$/);
  });

  it('make a Warning of code 299 with quotes and backslashes escaped (RFC 7234)', () => {
    expect(warningValue('unknown field "a\\b"')).to.equal('299 - "unknown field \\"a\\\\b\\""');
  });

  it('add each distinct warning once, cut long ones short past 4,096 runes, then drop them', () => {
    const headers: string[] = [];
    const ctx = { state: {}, append: (_: string, v: string) => headers.push(v) } as never;
    addWarning(ctx, 'same');
    addWarning(ctx, 'same');
    addWarning(ctx, '');
    expect(headers).to.deep.equal(['299 - "same"']);
    addWarning(ctx, 'x'.repeat(3700));
    addWarning(ctx, 'y'.repeat(1000));
    expect(headers[2]).to.equal(`299 - "${'y'.repeat(256)}"`);
    for (let i = 0; i < 10; i++) addWarning(ctx, `z${i}`.repeat(200));
    const runes = headers.reduce((n, h) => n + h.length - '299 - ""'.length, 0);
    expect(runes).to.be.at.most(4096);
  });
});

describe('list parameters found by fuzzing', () => {
  it('a limit beyond 64 bits is a 400, beyond 2^53 is capped, negative is none', () => {
    expect(fail(() => listPlan(new URLSearchParams('limit=99999999999999999999')))?.code).to.equal(400);
    expect(fail(() => listPlan(new URLSearchParams('limit=-9223372036854775809')))?.code).to.equal(400);
    expect(listPlan(new URLSearchParams('limit=9223372036854775807')).limit).to.equal(Number.MAX_SAFE_INTEGER);
    expect(listPlan(new URLSearchParams('limit=-5')).limit).to.equal(0);
  });

  it('timeoutSeconds must be a whole number of seconds on a list too', () => {
    expect(fail(() => listPlan(new URLSearchParams('timeoutSeconds=abc')))?.code).to.equal(400);
    expect(fail(() => listPlan(new URLSearchParams('timeoutSeconds=-1')))?.code).to.equal(400);
    expect(listPlan(new URLSearchParams('timeoutSeconds=30')).limit).to.equal(0);
  });

  it('a continue key outside the collection is not valid', () => {
    expect(fail(() => checkContinueWithin('core/secrets/a/b', 'core/configmaps/'))).to.include({ code: 400, reason: 'BadRequest' });
    expect(fail(() => checkContinueWithin('core/configmaps/a/b', 'core/configmaps/'))).to.equal(undefined);
    expect(fail(() => checkContinueWithin('', 'core/configmaps/a/'))).to.equal(undefined);
  });
});

describe('the fuzz generators', () => {
  it('draw the same requests and calls from the same seed, and others from another', () => {
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return JSON.stringify([Array.from({ length: 50 }, () => describeRequest(badRequest(rng, ['t']))), drawCalls(rng, 5).map((c) => [c.def.path, c.bytes.toString('base64')])]);
    };
    expect(draw(1)).to.equal(draw(1));
    expect(draw(1)).not.to.equal(draw(2));
  });

  it('draw requests a client can send: methods as tokens, paths and header values within what Node writes', () => {
    const rng = new Rng(3);
    for (let i = 0; i < 2000; i++) {
      const req = badRequest(rng, ['t']);
      expect(req.method).to.match(/^[A-Za-z]+$/);
      expect(req.path).to.match(/^\/[\u0021-\u00ff]*$/);
      for (const [name, value] of Object.entries(req.headers)) {
        expect(name).to.match(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
        expect(value).to.match(/^[\t\x20-\x7e\x80-\xff]*$/);
      }
    }
  });
});
