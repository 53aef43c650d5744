// The AuthenticationConfiguration file: decoding and every validation rule.
import { expect } from 'chai';
import { stringify } from 'yaml';
import { decodeAuthenticationConfiguration, parseAuthenticationConfig } from '../../internal/authn/index.js';
import { createCa } from '../../internal/pki/certs.js';

type Doc = Record<string, any>;

const jwt = (overrides: Doc = {}): Doc => ({
  issuer: { url: 'https://issuer.example', audiences: ['svc'], ...overrides.issuer },
  claimMappings: { username: { claim: 'sub', prefix: '' }, ...overrides.claimMappings },
  ...(overrides.claimValidationRules ? { claimValidationRules: overrides.claimValidationRules } : {}),
  ...(overrides.userValidationRules ? { userValidationRules: overrides.userValidationRules } : {}),
});
const doc = (entries: Doc[], extra: Doc = {}): string =>
  stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'AuthenticationConfiguration', jwt: entries, ...extra });

/** The message of loading a document that must fail. */
function failure(text: string, disallowed: string[] = []): string {
  try {
    parseAuthenticationConfig(text, 'auth.yaml', disallowed);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the document was accepted');
}

describe('AuthenticationConfiguration', () => {
  it('reads v1 and v1beta1 documents, with defaults for absent fields', () => {
    for (const version of ['v1', 'v1beta1']) {
      const loaded = parseAuthenticationConfig(doc([jwt()]).replace('/v1\n', `/${version}\n`), 'auth.yaml');
      expect(loaded.config.jwt[0].issuer).to.deep.equal({
        url: 'https://issuer.example', discoveryURL: '', certificateAuthority: '', audiences: ['svc'], audienceMatchPolicy: '', egressSelectorType: '',
      });
      expect(loaded.config.jwt[0].claimMappings.groups).to.deep.equal({ claim: '', prefix: undefined, expression: '' });
      expect(loaded.config.anonymous).to.equal(undefined);
    }
    const empty = parseAuthenticationConfig(doc([]), 'auth.yaml');
    expect(empty.config.jwt).to.deep.equal([]);
  });

  it('refuses unknown versions, kinds and fields, values of the wrong type and empty files', () => {
    expect(failure(doc([]).replace('apiserver.config.svc.io/v1', 'apiserver.config.svc.io/v2'))).to.contain('no kind "AuthenticationConfiguration" is registered for version "apiserver.config.svc.io/v2"');
    expect(failure(doc([]).replace('kind: AuthenticationConfiguration', 'kind: AuthorizationConfiguration'))).to.contain('no kind "AuthorizationConfiguration"');
    expect(failure(doc([{ ...jwt(), surprise: 1 }]))).to.contain('strict decoding error: unknown field "jwt[0].surprise"');
    expect(failure(doc([jwt({ issuer: { audiences: 'svc' } })]))).to.contain('jwt[0].issuer.audiences: cannot decode string as list');
    expect(failure('')).to.contain('empty config data');
    expect(() => decodeAuthenticationConfiguration('[1, 2]')).to.throw('must be an object');
  });

  const cases: Array<[string, () => string | Promise<string>, string]> = [
    ['more than 64 authenticators', () => doc(Array.from({ length: 65 }, (_, i) => jwt({ issuer: { url: `https://i${i}.example` } }))),
      'jwt: Too many: 65: must have at most 64 items'],
    ['a missing issuer url', () => doc([jwt({ issuer: { url: '' } })]), 'jwt[0].issuer.url: Required value'],
    ['a duplicate issuer url', () => doc([jwt(), jwt()]), 'jwt[1].issuer.url: Duplicate value: "https://issuer.example"'],
    ['an http issuer', () => doc([jwt({ issuer: { url: 'http://issuer.example' } })]), 'jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https'],
    ['credentials in the url', () => doc([jwt({ issuer: { url: 'https://u:p@issuer.example' } })]), 'URL must not contain a username or password'],
    ['a query in the url', () => doc([jwt({ issuer: { url: 'https://issuer.example?a=b' } })]), 'URL must not contain a query'],
    ['a fragment in the url', () => doc([jwt({ issuer: { url: 'https://issuer.example#x' } })]), 'URL must not contain a fragment'],
    ['the service-account issuer', () => doc([jwt()]), 'jwt[0].issuer.url: Invalid value: "https://issuer.example": URL must not overlap with disallowed issuers: [https://issuer.example]'],
    ['a discovery URL equal to the url', () => doc([jwt({ issuer: { discoveryURL: 'https://issuer.example/' } })]),
      'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer.example/": discoveryURL must be different from URL'],
    ['an http discovery URL', () => doc([jwt({ issuer: { discoveryURL: 'http://d.example/x' } })]), 'jwt[0].issuer.discoveryURL: Invalid value: "http://d.example/x": URL scheme must be https'],
    ['a duplicate discovery URL', () => doc([jwt({ issuer: { discoveryURL: 'https://d.example/x' } }), jwt({ issuer: { url: 'https://b.example', discoveryURL: 'https://d.example/x' } })]),
      'jwt[1].issuer.discoveryURL: Duplicate value: "https://d.example/x"'],
    ['no audiences', () => doc([jwt({ issuer: { audiences: [] } })]), 'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required'],
    ['an empty audience', () => doc([jwt({ issuer: { audiences: [''] } })]), 'jwt[0].issuer.audiences[0]: Required value'],
    ['a duplicate audience', () => doc([jwt({ issuer: { audiences: ['a', 'a'], audienceMatchPolicy: 'MatchAny' } })]), 'jwt[0].issuer.audiences[1]: Duplicate value: "a"'],
    ['several audiences without MatchAny', () => doc([jwt({ issuer: { audiences: ['a', 'b'] } })]),
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences'],
    ['an unknown policy for one audience', () => doc([jwt({ issuer: { audienceMatchPolicy: 'MatchAll' } })]),
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience'],
    ['a CA without certificates', () => doc([jwt({ issuer: { certificateAuthority: 'not a pem' } })]), 'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>"'],
    ['an unknown egress selector', () => doc([jwt({ issuer: { egressSelectorType: 'etcd' } })]),
      'jwt[0].issuer.egressSelectorType: Invalid value: "etcd": egress selector must be either controlplane or cluster'],
    ['a claim rule with claim and expression', () => doc([jwt({ claimValidationRules: [{ claim: 'hd', expression: 'true' }] })]),
      'jwt[0].claimValidationRules[0]: Invalid value: "hd": claim and expression can\'t both be set'],
    ['an empty claim rule', () => doc([jwt({ claimValidationRules: [{}] })]), 'jwt[0].claimValidationRules[0]: Required value: claim or expression is required'],
    ['a message with a claim', () => doc([jwt({ claimValidationRules: [{ claim: 'hd', requiredValue: 'x', message: 'm' }] })]),
      'jwt[0].claimValidationRules[0].message: Invalid value: "m": may not be specified when claim is set'],
    ['a duplicate claim', () => doc([jwt({ claimValidationRules: [{ claim: 'hd' }, { claim: 'hd' }] })]), 'jwt[0].claimValidationRules[1].claim: Duplicate value: "hd"'],
    ['a required value with an expression', () => doc([jwt({ claimValidationRules: [{ expression: 'true', requiredValue: 'x' }] })]),
      'jwt[0].claimValidationRules[0].requiredValue: Invalid value: "x": may not be specified when expression is set'],
    ['a duplicate claim expression', () => doc([jwt({ claimValidationRules: [{ expression: 'true' }, { expression: 'true' }] })]),
      'jwt[0].claimValidationRules[1].expression: Duplicate value: "true"'],
    ['a claim rule that is not boolean', () => doc([jwt({ claimValidationRules: [{ expression: '"yes"' }] })]),
      'jwt[0].claimValidationRules[0].expression: Invalid value: "\\"yes\\"": must evaluate to bool'],
    ['a claim rule that does not compile', () => doc([jwt({ claimValidationRules: [{ expression: 'claims.hd ==' }] })]),
      'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.hd ==": compilation failed: '],
    ['a claim rule over user', () => doc([jwt({ claimValidationRules: [{ expression: 'user.username == "a"' }] })]), "undeclared reference to 'user'"],
    ['no username mapping', () => doc([jwt({ claimMappings: { username: {} } })]), 'jwt[0].claimMappings.username: Required value: claim or expression is required'],
    ['a username claim and expression', () => doc([jwt({ claimMappings: { username: { claim: 'sub', expression: 'claims.sub' } } })]),
      'jwt[0].claimMappings.username: Invalid value: "": claim and expression can\'t both be set'],
    ['a username claim without prefix', () => doc([jwt({ claimMappings: { username: { claim: 'sub' } } })]),
      'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'],
    ['a prefix with a username expression', () => doc([jwt({ claimMappings: { username: { expression: 'claims.sub', prefix: 'p:' } } })]),
      'jwt[0].claimMappings.username.prefix: Invalid value: "p:": may not be specified when expression is set'],
    ['claims.email without claims.email_verified', () => doc([jwt({ claimMappings: { username: { expression: 'claims.email' } } })]),
      'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression'],
    ['a groups claim without prefix', () => doc([jwt({ claimMappings: { groups: { claim: 'groups' } } })]), 'jwt[0].claimMappings.groups.prefix: Required value'],
    ['a groups claim and expression', () => doc([jwt({ claimMappings: { groups: { claim: 'g', prefix: '', expression: 'claims.g' } } })]),
      'jwt[0].claimMappings.groups: Invalid value: "": claim and expression can\'t both be set'],
    ['a uid claim and expression', () => doc([jwt({ claimMappings: { uid: { claim: 'sub', expression: 'claims.sub' } } })]),
      'jwt[0].claimMappings.uid: Invalid value: "": claim and expression can\'t both be set'],
    ['a uid expression that does not compile', () => doc([jwt({ claimMappings: { uid: { expression: 'claims.' } } })]), 'jwt[0].claimMappings.uid.expression: Invalid value: "claims."'],
    ['an extra key without domain', () => doc([jwt({ claimMappings: { extra: [{ key: 'team', valueExpression: 'claims.t' }] } })]),
      'jwt[0].claimMappings.extra[0].key: Invalid value: "team": must be a domain-prefixed path (such as "acme.io/foo")'],
    ['an extra key with a bad domain', () => doc([jwt({ claimMappings: { extra: [{ key: 'ex_ample.org/team', valueExpression: 'claims.t' }] } })]),
      'jwt[0].claimMappings.extra[0].key: Invalid value: "ex_ample.org": a lowercase RFC 1123 subdomain'],
    ['an extra key with a bad path', () => doc([jwt({ claimMappings: { extra: [{ key: 'example.org/a b', valueExpression: 'claims.t' }] } })]),
      'jwt[0].claimMappings.extra[0].key: Invalid value: "a b": Invalid path'],
    ['an upper-case extra key', () => doc([jwt({ claimMappings: { extra: [{ key: 'example.org/Team', valueExpression: 'claims.t' }] } })]),
      'jwt[0].claimMappings.extra[0].key: Invalid value: "example.org/Team": must be lowercase'],
    ...['svc.io/x', 'a.svc.io/x', 'k8s.io/x', 'b.k8s.io/x', 'kubernetes.io/x', 'c.kubernetes.io/x'].map((key): [string, () => string, string] =>
      [`the reserved extra key ${key}`, () => doc([jwt({ claimMappings: { extra: [{ key, valueExpression: 'claims.t' }] } })]),
        `jwt[0].claimMappings.extra[0].key: Invalid value: "${key}": svc.io, k8s.io, kubernetes.io and their subdomains are reserved`]),
    ['a duplicate extra key', () => doc([jwt({ claimMappings: { extra: [{ key: 'example.org/t', valueExpression: 'claims.t' }, { key: 'example.org/t', valueExpression: 'claims.u' }] } })]),
      'jwt[0].claimMappings.extra[1].key: Duplicate value: "example.org/t"'],
    ['an extra mapping without value', () => doc([jwt({ claimMappings: { extra: [{ key: 'example.org/t' }] } })]), 'jwt[0].claimMappings.extra[0].valueExpression: Required value'],
    ['a user rule without expression', () => doc([jwt({ userValidationRules: [{ message: 'm' }] })]), 'jwt[0].userValidationRules[0].expression: Required value'],
    ['a duplicate user rule', () => doc([jwt({ userValidationRules: [{ expression: 'true' }, { expression: 'true' }] })]),
      'jwt[0].userValidationRules[1].expression: Duplicate value: "true"'],
    ['a user rule over claims', () => doc([jwt({ userValidationRules: [{ expression: 'claims.sub == "a"' }] })]), "undeclared reference to 'claims'"],
    ['a user rule on an unknown field', () => doc([jwt({ userValidationRules: [{ expression: 'user.name == "a"' }] })]), "undefined field 'name'"],
    ['anonymous conditions while disabled', () => doc([], { anonymous: { enabled: false, conditions: [{ path: '/livez' }] } }),
      'anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be set to true when conditions are defined'],
    ['an anonymous condition without path', () => doc([], { anonymous: { enabled: true, conditions: [{}] } }), 'anonymous.conditions[0].path: Required value'],
  ];

  for (const [rule, make, message] of cases) {
    it(`refuses ${rule}`, async () => {
      const disallowed = rule === 'the service-account issuer' ? ['https://issuer.example'] : [];
      expect(failure(await make(), disallowed)).to.contain(message);
    });
  }

  it('accepts a CA bundle, CEL mappings and rules that use claims.email with claims.email_verified', async () => {
    const ca = await createCa('test', 1);
    const loaded = parseAuthenticationConfig(doc([jwt({
      issuer: { certificateAuthority: ca.certPem, audiences: ['a', 'b'], audienceMatchPolicy: 'MatchAny', discoveryURL: 'https://d.example/.well-known/openid-configuration' },
      claimMappings: {
        username: { expression: "claims.email_verified ? claims.email : ''" },
        groups: { expression: 'claims.groups' }, uid: { claim: 'sub' },
        extra: [{ key: 'example.org/team', valueExpression: 'claims.team' }],
      },
      claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }, { expression: "claims.sub != ''", message: 'no subject' }],
      userValidationRules: [{ expression: "!user.username.startsWith('system:')", message: 'reserved' }],
    })], { anonymous: { enabled: true, conditions: [{ path: '/version' }] } }), 'auth.yaml');
    const [rules] = loaded.rules;
    expect(rules.requiredClaims).to.deep.equal([{ claim: 'hd', value: 'example.com' }]);
    expect(rules.claimValidation.map((r) => r.message)).to.deep.equal(['no subject']);
    expect(rules.extra.map((e) => e.key)).to.deep.equal(['example.org/team']);
    expect(loaded.config.anonymous).to.deep.equal({ enabled: true, conditions: [{ path: '/version' }] });
  });

  it('lists every error of a document at once, in one message', () => {
    const message = failure(doc([jwt({ issuer: { url: 'http://a.example', audiences: [] }, claimMappings: { username: { claim: 'sub' } } })]));
    expect(message).to.match(/^invalid authentication configuration: \[/);
    expect(message).to.contain('URL scheme must be https');
    expect(message).to.contain('at least one jwt[0].issuer.audiences is required');
    expect(message).to.contain('prefix is required when claim is set');
  });
});
