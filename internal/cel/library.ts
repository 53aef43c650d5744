// The functions the environment adds to the standard ones, the release that
// introduced each, and replacements for built-in functions whose meaning
// differs from the platform's (code point indexes, ASCII-only case mapping, RE2).
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import * as authz from './authz.js';
import { runtimeError } from './errors.js';
import * as lists from './lists.js';
import { Quantity, isQuantity } from './quantity.js';
import * as regex from './regex.js';
import { ALL_RELEASES, RELEASE_1_29, RELEASE_1_31 } from './release.js';
import { CIDRValue, IPValue, isCIDR, isIP } from './ip.js';
import * as strings from './strings.js';
import {
  AUTHORIZER_TYPE, CIDR_TYPE, DECISION_TYPE, GROUP_CHECK_TYPE, IP_TYPE, PATH_CHECK_TYPE, QUANTITY_TYPE, RESOURCE_CHECK_TYPE, URL_TYPE,
} from './typenames.js';
import { UrlValue, isUrl, toUrl } from './url.js';
import { doubleToString, formatDuration, formatTimestamp } from './values.js';

/** A function implementation; its parameters are checked by the signature it is registered with. */
type Handler = (...args: never[]) => unknown;

interface FunctionGroup {
  readonly since: string;
  readonly overloads: ReadonlyArray<readonly [signature: string, handler: Handler]>;
}

const Q = QUANTITY_TYPE;
const COMPARABLE = ['int', 'uint', 'double', 'bool', 'google.protobuf.Duration', 'google.protobuf.Timestamp', 'string', 'bytes'];
const SUMMABLE: ReadonlyArray<readonly [string, unknown]> = [
  ['int', 0n], ['uint', new UnsignedInt(0)], ['double', 0], ['google.protobuf.Duration', new Duration(0, 0)],
];

const perType = (types: readonly string[], make: (t: string) => readonly [string, Handler]) => types.map(make);

const STRINGS: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    ['string.charAt(int): string', strings.charAt],
    ['string.replace(string, string): string', strings.replace],
    ['string.replace(string, string, int): string', strings.replace],
  ],
};

const LISTS: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    ...perType(COMPARABLE, (t) => [`list<${t}>.isSorted(): bool`, lists.isSorted]),
    ...perType(COMPARABLE, (t) => [`list<${t}>.min(): ${t}`, lists.min]),
    ...perType(COMPARABLE, (t) => [`list<${t}>.max(): ${t}`, lists.max]),
    ...SUMMABLE.map(([t, zero]) => [`list<${t}>.sum(): ${t}`, (l: unknown[]) => lists.sum(l, zero)] as const),
    ['list<A>.indexOf(A): int', lists.indexOf],
    ['list<A>.lastIndexOf(A): int', lists.lastIndexOf],
  ],
};

const REGEX: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    ['matches(string, string): bool', regex.matches],
    ['string.find(string): string', regex.find],
    ['string.findAll(string): list<string>', regex.findAll],
    ['string.findAll(string, int): list<string>', regex.findAll],
  ],
};

const URLS: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    [`url(string): ${URL_TYPE}`, toUrl],
    ['isURL(string): bool', isUrl],
    [`${URL_TYPE}.getScheme(): string`, (u: UrlValue) => u.scheme()],
    [`${URL_TYPE}.getHost(): string`, (u: UrlValue) => u.host()],
    [`${URL_TYPE}.getHostname(): string`, (u: UrlValue) => u.hostname()],
    [`${URL_TYPE}.getPort(): string`, (u: UrlValue) => u.port()],
    [`${URL_TYPE}.getEscapedPath(): string`, (u: UrlValue) => u.escapedPath()],
    [`${URL_TYPE}.getQuery(): map<string, list<string>>`, (u: UrlValue) => u.query()],
  ],
};

const AUTHZ: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    [`${AUTHORIZER_TYPE}.path(string): ${PATH_CHECK_TYPE}`, authz.path],
    [`${AUTHORIZER_TYPE}.group(string): ${GROUP_CHECK_TYPE}`, authz.group],
    [`${AUTHORIZER_TYPE}.serviceAccount(string, string): ${AUTHORIZER_TYPE}`, authz.serviceAccount],
    [`${GROUP_CHECK_TYPE}.resource(string): ${RESOURCE_CHECK_TYPE}`, authz.resource],
    [`${RESOURCE_CHECK_TYPE}.subresource(string): ${RESOURCE_CHECK_TYPE}`, (r: authz.ResourceCheckValue, s: string) => r.with({ subresource: s })],
    [`${RESOURCE_CHECK_TYPE}.namespace(string): ${RESOURCE_CHECK_TYPE}`, (r: authz.ResourceCheckValue, s: string) => r.with({ namespace: s })],
    [`${RESOURCE_CHECK_TYPE}.name(string): ${RESOURCE_CHECK_TYPE}`, (r: authz.ResourceCheckValue, s: string) => r.with({ name: s })],
    [`${RESOURCE_CHECK_TYPE}.fieldSelector(string): ${RESOURCE_CHECK_TYPE}`, (r: authz.ResourceCheckValue, s: string) => r.with({ fieldSelector: s })],
    [`${RESOURCE_CHECK_TYPE}.labelSelector(string): ${RESOURCE_CHECK_TYPE}`, (r: authz.ResourceCheckValue, s: string) => r.with({ labelSelector: s })],
    [`${PATH_CHECK_TYPE}.check(string): ${DECISION_TYPE}`, authz.checkPath],
    [`${RESOURCE_CHECK_TYPE}.check(string): ${DECISION_TYPE}`, authz.checkResource],
    [`${DECISION_TYPE}.allowed(): bool`, (d: authz.DecisionValue) => d.decision.decision === 'allow'],
    [`${DECISION_TYPE}.reason(): string`, (d: authz.DecisionValue) => d.decision.reason ?? ''],
    [`${DECISION_TYPE}.errored(): bool`, (d: authz.DecisionValue) => Boolean(d.decision.error)],
    [`${DECISION_TYPE}.error(): string`, (d: authz.DecisionValue) => d.decision.error ?? ''],
  ],
};

const QUANTITY: FunctionGroup = {
  since: RELEASE_1_29,
  overloads: [
    [`quantity(string): ${Q}`, Quantity.parse],
    ['isQuantity(string): bool', isQuantity],
    [`sign(${Q}): int`, (q: Quantity) => q.sign()],
    [`${Q}.sign(): int`, (q: Quantity) => q.sign()],
    [`${Q}.isInteger(): bool`, (q: Quantity) => q.isInteger()],
    [`${Q}.asInteger(): int`, (q: Quantity) => q.asInteger()],
    [`${Q}.asApproximateFloat(): double`, (q: Quantity) => q.asApproximateFloat()],
    [`${Q}.add(${Q}): ${Q}`, (q: Quantity, o: Quantity) => q.add(o)],
    [`${Q}.add(int): ${Q}`, (q: Quantity, o: bigint) => q.add(Quantity.fromInt(o))],
    [`${Q}.sub(${Q}): ${Q}`, (q: Quantity, o: Quantity) => q.sub(o)],
    [`${Q}.sub(int): ${Q}`, (q: Quantity, o: bigint) => q.sub(Quantity.fromInt(o))],
    [`${Q}.isGreaterThan(${Q}): bool`, (q: Quantity, o: Quantity) => q.compareTo(o) > 0n],
    [`${Q}.isLessThan(${Q}): bool`, (q: Quantity, o: Quantity) => q.compareTo(o) < 0n],
    [`${Q}.compareTo(${Q}): int`, (q: Quantity, o: Quantity) => q.compareTo(o)],
  ],
};

const OPTIONALS: FunctionGroup = {
  since: RELEASE_1_29,
  overloads: [['OptionalNamespace.ofNonZeroValue(A): optional<A>', (_ns: unknown, v: unknown) => ofNonZeroValue(v)]],
};

/** Standard conversions the underlying implementation lacks. */
const CONVERSIONS: FunctionGroup = {
  since: ALL_RELEASES,
  overloads: [
    ['int(uint): int', (u: UnsignedInt) => toInt64(u.valueOf())],
    ['int(google.protobuf.Timestamp): int', (d: Date) => BigInt(Math.floor(d.getTime() / 1000))],
    ['int(google.protobuf.Duration): int', (d: Duration) => d.seconds * 1_000_000_000n + BigInt(d.nanos)],
    ['string(google.protobuf.Timestamp): string', formatTimestamp],
    ['string(google.protobuf.Duration): string', formatDuration],
    ['timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (d: Date) => d],
    ['duration(google.protobuf.Duration): google.protobuf.Duration', (d: Duration) => d],
    // Only values of the IP library (1.31) reach these, so they need no release of their own.
    [`string(${IP_TYPE}): string`, (ip: IPValue) => ip.toString()],
    [`string(${CIDR_TYPE}): string`, (c: CIDRValue) => c.toString()],
  ],
};

function toInt64(v: bigint): bigint {
  if (v > 2n ** 63n - 1n) throw runtimeError('integer overflow');
  return v;
}

function isZeroValue(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0n || v === 0) return true;
  if (v instanceof UnsignedInt) return v.valueOf() === 0n;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  // Map literals evaluate to plain objects.
  if (v !== null && typeof v === 'object' && v.constructor === Object) return Object.keys(v).length === 0;
  return false;
}

function ofNonZeroValue(v: unknown): Optional {
  return isZeroValue(v) ? Optional.none() : Optional.of(v);
}

const IP = IP_TYPE;
const CIDR = CIDR_TYPE;
const NETWORK: FunctionGroup = {
  since: RELEASE_1_31,
  overloads: [
    ['isIP(string): bool', isIP],
    [`ip(string): ${IP}`, IPValue.parse],
    [`${IP}.family(): int`, (ip: IPValue) => ip.family()],
    [`${IP}.isUnspecified(): bool`, (ip: IPValue) => ip.isUnspecified()],
    [`${IP}.isLoopback(): bool`, (ip: IPValue) => ip.isLoopback()],
    [`${IP}.isLinkLocalMulticast(): bool`, (ip: IPValue) => ip.isLinkLocalMulticast()],
    [`${IP}.isLinkLocalUnicast(): bool`, (ip: IPValue) => ip.isLinkLocalUnicast()],
    [`${IP}.isGlobalUnicast(): bool`, (ip: IPValue) => ip.isGlobalUnicast()],
    ['isCIDR(string): bool', isCIDR],
    [`cidr(string): ${CIDR}`, CIDRValue.parse],
    [`${CIDR}.containsIP(${IP}): bool`, (c: CIDRValue, ip: IPValue) => c.containsIP(ip)],
    [`${CIDR}.containsIP(string): bool`, (c: CIDRValue, ip: string) => c.containsIP(IPValue.parse(ip))],
    [`${CIDR}.containsCIDR(${CIDR}): bool`, (c: CIDRValue, o: CIDRValue) => c.containsCIDR(o)],
    [`${CIDR}.containsCIDR(string): bool`, (c: CIDRValue, o: string) => c.containsCIDR(CIDRValue.parse(o))],
    [`${CIDR}.ip(): ${IP}`, (c: CIDRValue) => c.ip],
    [`${CIDR}.masked(): ${CIDR}`, (c: CIDRValue) => c.masked()],
    [`${CIDR}.prefixLength(): int`, (c: CIDRValue) => BigInt(c.prefix)],
  ],
};

const GROUPS = [STRINGS, LISTS, REGEX, URLS, AUTHZ, QUANTITY, NETWORK, OPTIONALS, CONVERSIONS];

const functionName = (signature: string): string => /(\w+)\(/.exec(signature)![1];

/** Release that introduced each added function, by name; absent names date from the first release. */
export const FUNCTION_RELEASES: ReadonlyMap<string, string> = new Map(
  GROUPS.filter((g) => g.since !== ALL_RELEASES).flatMap((g) => g.overloads.map(([sig]) => [functionName(sig), g.since] as const)),
);

const OPAQUE_TYPES: ReadonlyArray<readonly [string, abstract new (...args: never[]) => unknown]> = [
  [URL_TYPE, UrlValue], [Q, Quantity], [AUTHORIZER_TYPE, authz.AuthorizerValue], [PATH_CHECK_TYPE, authz.PathCheckValue],
  [GROUP_CHECK_TYPE, authz.GroupCheckValue], [RESOURCE_CHECK_TYPE, authz.ResourceCheckValue], [DECISION_TYPE, authz.DecisionValue],
  [IP_TYPE, IPValue], [CIDR_TYPE, CIDRValue],
];

/** Adds the library types and functions to an environment. */
export function registerLibraries(env: Environment): void {
  for (const [name, ctor] of OPAQUE_TYPES) env.registerType(name, { ctor: ctor as never, fields: {} });
  env.registerOperator(`${Q} == ${Q}`, (a: Quantity, b: Quantity) => a.equals(b));
  env.registerOperator(`${IP_TYPE} == ${IP_TYPE}`, (a: IPValue, b: IPValue) => a.equals(b));
  env.registerOperator(`${CIDR_TYPE} == ${CIDR_TYPE}`, (a: CIDRValue, b: CIDRValue) => a.equals(b));
  for (const group of GROUPS) {
    for (const [signature, handler] of group.overloads) env.registerFunction(signature, handler, { async: false });
  }
}

/** Replacement of a built-in function, applied when its first argument (or receiver) has the given kind. */
interface Replacement {
  readonly first: 'string' | 'list' | 'double';
  readonly impl: (...args: unknown[]) => unknown;
}

const on = (first: Replacement['first'], impl: Handler): Replacement => ({ first, impl: impl as Replacement['impl'] });

/**
 * Built-in functions replaced by the platform's semantics, keyed by
 * name/argument count, with a leading dot for methods.
 */
export const REPLACEMENTS: ReadonlyMap<string, Replacement> = new Map([
  ['.lowerAscii/0', on('string', strings.lowerAscii)],
  ['.upperAscii/0', on('string', strings.upperAscii)],
  ['.trim/0', on('string', strings.trim)],
  ['.indexOf/1', on('string', strings.indexOf)],
  ['.indexOf/2', on('string', strings.indexOf)],
  ['.lastIndexOf/1', on('string', strings.lastIndexOf)],
  ['.lastIndexOf/2', on('string', strings.lastIndexOf)],
  ['.substring/1', on('string', strings.substring)],
  ['.substring/2', on('string', strings.substring)],
  ['.split/1', on('string', strings.split)],
  ['.split/2', on('string', strings.split)],
  ['.matches/1', on('string', regex.matches)],
  ['.join/0', on('list', strings.join)],
  ['.join/1', on('list', strings.join)],
  ['string/1', on('double', doubleToString)],
]);
