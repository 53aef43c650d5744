// The rules of an AuthenticationConfiguration, as upstream checks them, with
// every CEL expression compiled on the way: the result is either the complete
// list of errors or the compiled rules each JWT authenticator runs.
import { X509Certificate } from 'node:crypto';
import { compile, CompileError, type Program } from '../../cel/index.js';
import { dns1123Subdomain } from '../../apimachinery/validation.js';
import { DOMAIN, UPSTREAM_DOMAIN, UPSTREAM_LABEL_DOMAIN } from '../../names/index.js';
import { duplicate, invalid, required, tooMany, type FieldError } from './fielderrors.js';
import type {
  AuthenticationConfiguration, ClaimMappings, ClaimValidationRule, Issuer, JWTAuthenticatorConfig, PrefixedClaimOrExpression, UserValidationRule,
} from './types.js';

export const MAX_JWT_AUTHENTICATORS = 64;
const MATCH_ANY = 'MatchAny';
const EGRESS_SELECTORS = ['controlplane', 'cluster'];
const RESERVED_DOMAINS = [DOMAIN, UPSTREAM_DOMAIN, UPSTREAM_LABEL_DOMAIN];
const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

export interface CheckedExpression {
  expression: string;
  message: string;
  program: Program;
}

/** What one JWT authenticator runs on a token's claims, compiled. */
export interface CompiledRules {
  requiredClaims: Array<{ claim: string; value: string }>;
  claimValidation: CheckedExpression[];
  username?: Program;
  groups?: Program;
  uid?: Program;
  extra: Array<{ key: string; program: Program }>;
  userValidation: CheckedExpression[];
}

/** Tracks whether claims.email is read without claims.email_verified. */
interface EmailUse { email: boolean; verified: boolean }

type Variable = 'claims' | 'user';

/** Compiles an expression for a field; errors name the field. */
function compileAt(errors: FieldError[], path: string, expression: string, variable: Variable, outputType?: string): Program | undefined {
  let program: Program;
  try {
    program = compile(expression, { variables: [variable] });
  } catch (err) {
    if (!(err instanceof CompileError)) throw err;
    errors.push(invalid(path, expression, `compilation failed: ${err.message}`));
    return undefined;
  }
  if (outputType && program.outputType !== outputType) {
    errors.push(invalid(path, expression, `must evaluate to ${outputType}`));
    return undefined;
  }
  return program;
}

function validateUrl(errors: FieldError[], path: string, value: string, disallowed: string[]): void {
  if (disallowed.includes(value)) {
    errors.push(invalid(path, value, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push(invalid(path, value, 'URL is not valid'));
    return;
  }
  if (url.protocol !== 'https:') errors.push(invalid(path, value, 'URL scheme must be https'));
  if (url.username || url.password) errors.push(invalid(path, value, 'URL must not contain a username or password'));
  if (url.search) errors.push(invalid(path, value, 'URL must not contain a query'));
  if (url.hash) errors.push(invalid(path, value, 'URL must not contain a fragment'));
}

const trimSlashes = (s: string) => s.replace(/\/+$/, '');

function validateAudiences(errors: FieldError[], path: string, issuer: Issuer): void {
  const { audiences, audienceMatchPolicy: policy } = issuer;
  if (audiences.length === 0) {
    errors.push(required(`${path}.audiences`, `at least one ${path}.audiences is required`));
    return;
  }
  const seen = new Set<string>();
  audiences.forEach((audience, i) => {
    if (audience === '') errors.push(required(`${path}.audiences[${i}]`));
    if (seen.has(audience)) errors.push(duplicate(`${path}.audiences[${i}]`, audience));
    seen.add(audience);
  });
  if (audiences.length > 1 && policy !== MATCH_ANY) {
    errors.push(invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'));
  }
  if (audiences.length === 1 && policy !== '' && policy !== MATCH_ANY) {
    errors.push(invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'));
  }
}

/** True when the PEM text holds at least one certificate Node can read. */
function hasCertificates(pem: string): boolean {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    return blocks.length > 0 && blocks.every((b) => new X509Certificate(b));
  } catch {
    return false;
  }
}

function validateIssuer(errors: FieldError[], path: string, issuer: Issuer, disallowed: string[]): void {
  if (issuer.url === '') errors.push(required(`${path}.url`));
  else validateUrl(errors, `${path}.url`, issuer.url, disallowed);
  if (issuer.discoveryURL !== '') {
    if (issuer.url !== '' && trimSlashes(issuer.url) === trimSlashes(issuer.discoveryURL)) {
      errors.push(invalid(`${path}.discoveryURL`, issuer.discoveryURL, 'discoveryURL must be different from URL'));
    }
    validateUrl(errors, `${path}.discoveryURL`, issuer.discoveryURL, []);
  }
  validateAudiences(errors, path, issuer);
  if (issuer.certificateAuthority !== '' && !hasCertificates(issuer.certificateAuthority)) {
    errors.push(invalid(`${path}.certificateAuthority`, '<omitted>', 'data does not contain any valid RSA or ECDSA certificates'));
  }
  if (issuer.egressSelectorType !== '' && !EGRESS_SELECTORS.includes(issuer.egressSelectorType)) {
    errors.push(invalid(`${path}.egressSelectorType`, issuer.egressSelectorType, 'egress selector must be either controlplane or cluster'));
  }
}

function validateClaimRules(errors: FieldError[], path: string, rules: ClaimValidationRule[], out: CompiledRules, email: EmailUse): void {
  const claims = new Set<string>();
  const expressions = new Set<string>();
  rules.forEach((rule, i) => {
    const at = `${path}[${i}]`;
    if (rule.claim && rule.expression) {
      errors.push(invalid(at, rule.claim, "claim and expression can't both be set"));
    } else if (!rule.claim && !rule.expression) {
      errors.push(required(at, 'claim or expression is required'));
    } else if (rule.claim) {
      if (rule.message) errors.push(invalid(`${at}.message`, rule.message, 'may not be specified when claim is set'));
      if (claims.has(rule.claim)) errors.push(duplicate(`${at}.claim`, rule.claim));
      claims.add(rule.claim);
      out.requiredClaims.push({ claim: rule.claim, value: rule.requiredValue });
    } else {
      if (rule.requiredValue) errors.push(invalid(`${at}.requiredValue`, rule.requiredValue, 'may not be specified when expression is set'));
      if (expressions.has(rule.expression)) {
        errors.push(duplicate(`${at}.expression`, rule.expression));
        return;
      }
      expressions.add(rule.expression);
      const program = compileAt(errors, `${at}.expression`, rule.expression, 'claims', 'bool');
      if (!program) return;
      email.verified ||= program.selects('claims', 'email_verified');
      out.claimValidation.push({ expression: rule.expression, message: rule.message, program });
    }
  });
}

/** A username or groups mapping: a claim with a prefix, or an expression. */
function validatePrefixed(errors: FieldError[], path: string, mapping: PrefixedClaimOrExpression, isRequired: boolean): Program | undefined {
  if (mapping.claim && mapping.expression) {
    errors.push(invalid(path, '', "claim and expression can't both be set"));
  } else if (!mapping.claim && !mapping.expression) {
    if (isRequired) errors.push(required(path, 'claim or expression is required'));
  } else if (mapping.expression) {
    if (mapping.prefix !== undefined) errors.push(invalid(`${path}.prefix`, mapping.prefix, 'may not be specified when expression is set'));
    return compileAt(errors, `${path}.expression`, mapping.expression, 'claims');
  } else if (mapping.prefix === undefined) {
    errors.push(required(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
  }
  return undefined;
}

const domainOf = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const isReserved = (key: string) => RESERVED_DOMAINS.some((d) => domainOf(key) === d || domainOf(key).endsWith(`.${d}`));

/** An extra key: a domain-prefixed path (`example.org/team`). */
function validateExtraKey(errors: FieldError[], path: string, key: string): void {
  if (key === '') {
    errors.push(required(path));
    return;
  }
  const slash = key.indexOf('/');
  const [host, rest] = slash < 0 ? [key, ''] : [key.slice(0, slash), key.slice(slash + 1)];
  if (slash < 0 || host === '' || rest === '') {
    errors.push(invalid(path, key, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  } else {
    for (const cause of dns1123Subdomain(path, host)) errors.push(invalid(path, host, (cause.message ?? '').replace(/^Invalid value: "[^"]*": /, '')));
    if (!HTTP_PATH.test(rest)) errors.push(invalid(path, rest, `Invalid path (regex used for validation is '${HTTP_PATH.source.slice(1, -1)}')`));
  }
  if (key !== key.toLowerCase()) errors.push(invalid(path, key, 'must be lowercase'));
  if (isReserved(key)) errors.push(invalid(path, key, `${RESERVED_DOMAINS.join(', ')} and their subdomains are reserved for the platform's use`));
}

function validateMappings(errors: FieldError[], path: string, m: ClaimMappings, out: CompiledRules, email: EmailUse): void {
  out.username = validatePrefixed(errors, `${path}.username`, m.username, true);
  if (out.username) {
    email.email ||= out.username.selects('claims', 'email');
    email.verified ||= out.username.selects('claims', 'email_verified');
  }
  out.groups = validatePrefixed(errors, `${path}.groups`, m.groups, false);
  if (m.uid.claim && m.uid.expression) errors.push(invalid(`${path}.uid`, '', "claim and expression can't both be set"));
  else if (m.uid.expression) out.uid = compileAt(errors, `${path}.uid.expression`, m.uid.expression, 'claims');
  const keys = new Set<string>();
  m.extra.forEach((mapping, i) => {
    const at = `${path}.extra[${i}]`;
    validateExtraKey(errors, `${at}.key`, mapping.key);
    if (keys.has(mapping.key)) {
      errors.push(duplicate(`${at}.key`, mapping.key));
      return;
    }
    keys.add(mapping.key);
    if (!mapping.valueExpression) {
      errors.push(required(`${at}.valueExpression`));
      return;
    }
    const program = compileAt(errors, `${at}.valueExpression`, mapping.valueExpression, 'claims');
    if (!program) return;
    email.verified ||= program.selects('claims', 'email_verified');
    out.extra.push({ key: mapping.key, program });
  });
}

function validateUserRules(errors: FieldError[], path: string, rules: UserValidationRule[], out: CompiledRules): void {
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const at = `${path}[${i}].expression`;
    if (!rule.expression) {
      errors.push(required(at));
      return;
    }
    if (seen.has(rule.expression)) {
      errors.push(duplicate(at, rule.expression));
      return;
    }
    seen.add(rule.expression);
    const program = compileAt(errors, at, rule.expression, 'user', 'bool');
    if (program) out.userValidation.push({ expression: rule.expression, message: rule.message, program });
  });
}

/** Checks one JWT authenticator; path is its place in the file (`jwt[0]`). */
export function validateJWTAuthenticator(a: JWTAuthenticatorConfig, path: string, disallowedIssuers: string[] = []): { errors: FieldError[]; rules: CompiledRules } {
  const errors: FieldError[] = [];
  const rules: CompiledRules = { requiredClaims: [], claimValidation: [], extra: [], userValidation: [] };
  const email: EmailUse = { email: false, verified: false };
  validateIssuer(errors, `${path}.issuer`, a.issuer, disallowedIssuers);
  validateClaimRules(errors, `${path}.claimValidationRules`, a.claimValidationRules, rules, email);
  validateMappings(errors, `${path}.claimMappings`, a.claimMappings, rules, email);
  if (email.email && !email.verified) {
    errors.push(invalid(`${path}.claimMappings.username.expression`, a.claimMappings.username.expression,
      'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'));
  }
  validateUserRules(errors, `${path}.userValidationRules`, a.userValidationRules, rules);
  return { errors, rules };
}

/** Checks a whole configuration; the compiled rules are in the order of `jwt`. */
export function validateAuthenticationConfiguration(config: AuthenticationConfiguration, disallowedIssuers: string[] = []): { errors: FieldError[]; rules: CompiledRules[] } {
  if (config.jwt.length > MAX_JWT_AUTHENTICATORS) return { errors: [tooMany('jwt', config.jwt.length, MAX_JWT_AUTHENTICATORS)], rules: [] };
  const errors: FieldError[] = [];
  const rules: CompiledRules[] = [];
  const issuers = new Set<string>();
  const discoveryURLs = new Set<string>();
  config.jwt.forEach((a, i) => {
    const checked = validateJWTAuthenticator(a, `jwt[${i}]`, disallowedIssuers);
    errors.push(...checked.errors);
    rules.push(checked.rules);
    if (issuers.has(a.issuer.url)) errors.push(duplicate(`jwt[${i}].issuer.url`, a.issuer.url));
    issuers.add(a.issuer.url);
    if (a.issuer.discoveryURL) {
      if (discoveryURLs.has(a.issuer.discoveryURL)) errors.push(duplicate(`jwt[${i}].issuer.discoveryURL`, a.issuer.discoveryURL));
      discoveryURLs.add(a.issuer.discoveryURL);
    }
  });
  const { anonymous } = config;
  if (anonymous && !anonymous.enabled && anonymous.conditions.length > 0) {
    errors.push(invalid('anonymous.conditions', anonymous.conditions, 'enabled should be set to true when conditions are defined'));
  }
  anonymous?.conditions.forEach((c, i) => { if (!c.path) errors.push(required(`anonymous.conditions[${i}].path`)); });
  return { errors, rules };
}
