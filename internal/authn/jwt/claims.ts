// From verified claims to a user: required claims, CEL claim validation rules,
// the username, groups, uid and extra mappings, then the user validation rules.
import { CostLimitError, EvalError, type Program } from '../../cel/index.js';
import type { CheckedExpression, CompiledRules } from '../jwtconfig/validate.js';
import type { ClaimMappings } from '../jwtconfig/types.js';
import { AuthenticationError, newUser, type User } from '../types.js';

export type Claims = Record<string, unknown>;

const fail = (message: string): never => { throw new AuthenticationError(`oidc: ${message}`); };

function run(program: Program, activation: Record<string, unknown>, what: string): unknown {
  try {
    return program.evaluate(activation).value;
  } catch (err) {
    if (err instanceof EvalError || err instanceof CostLimitError) return fail(`error evaluating ${what}: ${err.message}`);
    throw err;
  }
}

function stringClaim(claims: Claims, name: string, what: string): string {
  if (!(name in claims)) return fail(`parse ${what} ${JSON.stringify(name)}: claim not present`);
  const value = claims[name];
  if (typeof value !== 'string') return fail(`parse ${what} ${JSON.stringify(name)}: json: cannot unmarshal ${typeof value} into Go value of type string`);
  return value;
}

/** A string or list of strings, as groups and extra values may be. */
function stringList(value: unknown, what: string): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  return fail(`error evaluating ${what}: expression must return a string or a list of strings`);
}

function checkRules(rules: CheckedExpression[], activation: Record<string, unknown>, what: string): void {
  for (const rule of rules) {
    const value = run(rule.program, activation, what);
    if (value !== true) fail(`error evaluating ${what}: validation expression '${rule.expression}' failed: ${rule.message}`);
  }
}

function username(claims: Claims, m: ClaimMappings, rules: CompiledRules): string {
  if (rules.username) {
    const value = run(rules.username, { claims }, 'username claim expression');
    if (typeof value !== 'string') return fail('error evaluating username claim expression: username claim expression must return a string');
    return value;
  }
  const name = stringClaim(claims, m.username.claim, 'username claims');
  // An email is only a name once the provider says it was verified (when it says so at all).
  if (m.username.claim === 'email' && 'email_verified' in claims) {
    if (typeof claims.email_verified !== 'boolean') fail("parse 'email_verified' claim: not a boolean");
    if (claims.email_verified !== true) fail('email not verified');
  }
  return (m.username.prefix ?? '') + name;
}

function groups(claims: Claims, m: ClaimMappings, rules: CompiledRules): string[] {
  if (m.groups.claim && m.groups.claim in claims) {
    const value = claims[m.groups.claim];
    const list = typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
    if (!list) return fail(`parse groups claim ${JSON.stringify(m.groups.claim)}: must be a string or an array of strings`);
    return list.map((g) => (m.groups.prefix ?? '') + g);
  }
  if (!rules.groups) return [];
  return stringList(run(rules.groups, { claims }, 'group claim expression'), 'group claim expression');
}

function uid(claims: Claims, m: ClaimMappings, rules: CompiledRules): string {
  if (m.uid.claim) return stringClaim(claims, m.uid.claim, 'uid claim');
  if (!rules.uid) return '';
  const value = run(rules.uid, { claims }, 'uid claim expression');
  if (typeof value !== 'string') return fail('error evaluating uid claim expression: uid claim expression must return a string');
  return value;
}

function extra(claims: Claims, rules: CompiledRules): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { key, program } of rules.extra) {
    const values = stringList(run(program, { claims }, 'extra claim expression'), 'extra claim expression');
    if (values.length) out[key] = values;
  }
  return out;
}

function checkRequiredClaims(claims: Claims, rules: CompiledRules): void {
  for (const { claim, value } of rules.requiredClaims) {
    if (!(claim in claims)) fail(`required claim ${claim} not present in ID token`);
    const got = claims[claim];
    if (typeof got !== 'string') fail(`parse claim ${claim}: not a string`);
    if (got !== value) fail(`required claim ${claim} value does not match. Got = ${String(got)}, want = ${value}`);
  }
}

/** The user a token's verified claims describe, or an AuthenticationError. */
export function userFromClaims(claims: Claims, mappings: ClaimMappings, rules: CompiledRules): User {
  const user = newUser(username(claims, mappings, rules), {
    groups: groups(claims, mappings, rules), uid: uid(claims, mappings, rules), extra: extra(claims, rules),
  });
  checkRequiredClaims(claims, rules);
  checkRules(rules.claimValidation, { claims }, 'claim validation expression');
  if (user.username === '') fail('empty username is not allowed');
  checkRules(rules.userValidation, { user }, 'user info validation rule');
  return user;
}
