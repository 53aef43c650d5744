// Client certificate authentication: the leaf presented in the TLS handshake must
// chain (through the intermediates the client sent) to a CA of --client-ca-file,
// every certificate of the chain must be within its validity period and allow
// client authentication when it restricts its extended key usage. The user is
// the subject's common name, its groups the subject's organizations.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { X509Certificate as NodeCertificate, createHash } from 'node:crypto';
import { AuthenticationError, newUser, type Authenticated, type RequestAuthenticator, type RequestCredentials } from './types.js';

const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const OID_ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';
/** Longest chain followed, leaf and root included. */
const MAX_CHAIN_LENGTH = 10;

/** One certificate, parsed twice: Node checks issuance and signatures, the
 * x509 library reads names, dates and extensions. */
export class Certificate {
  readonly node: NodeCertificate;
  readonly parsed: x509.X509Certificate;
  constructor(readonly der: Buffer) {
    this.node = new NodeCertificate(der);
    this.parsed = new x509.X509Certificate(der);
  }
  /** True when issuer's key signed this certificate and the names match. */
  issuedBy(issuer: Certificate): boolean {
    try {
      return this.node.checkIssued(issuer.node) && this.node.verify(issuer.node.publicKey);
    } catch {
      return false; // a key of another type than the signature's
    }
  }
  get extendedKeyUsages(): string[] | undefined {
    return this.parsed.getExtension(x509.ExtendedKeyUsageExtension)?.usages.map(String);
  }
}

/** Reads every CERTIFICATE block of a PEM bundle. */
export function parseCaBundle(pem: string): Certificate[] {
  const blocks = x509.PemConverter.decodeWithHeaders(pem).filter((b) => b.type === 'CERTIFICATE');
  if (blocks.length === 0) throw new Error('data does not contain any valid certificates');
  return blocks.map((b) => new Certificate(Buffer.from(b.rawData)));
}

/** Go's RFC 3339 rendering, which the messages below keep. */
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function checkValidity(cert: Certificate, now: Date): void {
  const { notBefore, notAfter } = cert.parsed;
  const detail = now < notBefore ? `current time ${rfc3339(now)} is before ${rfc3339(notBefore)}`
    : now > notAfter ? `current time ${rfc3339(now)} is after ${rfc3339(notAfter)}` : '';
  if (detail) throw new AuthenticationError(`x509: certificate has expired or is not yet valid: ${detail}`);
}

const allowsClientAuth = (cert: Certificate): boolean => {
  const usages = cert.extendedKeyUsages;
  return usages === undefined || usages.length === 0
    || usages.includes(OID_CLIENT_AUTH) || usages.includes(OID_ANY_EXTENDED_KEY_USAGE);
};

const sameCertificate = (a: Certificate, b: Certificate): boolean => a.der.equals(b.der);

/** Finds chains from cert up to a root; records why candidates were refused. */
function buildChains(chain: Certificate[], roots: Certificate[], intermediates: Certificate[], now: Date,
  errors: AuthenticationError[]): Certificate[][] {
  const cert = chain[chain.length - 1];
  const found: Certificate[][] = [];
  const consider = (issuer: Certificate, isRoot: boolean) => {
    if (chain.some((c) => sameCertificate(c, issuer)) || !cert.issuedBy(issuer)) return;
    try {
      checkValidity(issuer, now);
      if (!isRoot && !issuer.node.ca) throw new AuthenticationError('x509: certificate is not authorized to sign other certificates');
    } catch (err) {
      errors.push(err as AuthenticationError);
      return;
    }
    if (isRoot) found.push([...chain, issuer]);
    else if (chain.length + 1 < MAX_CHAIN_LENGTH) found.push(...buildChains([...chain, issuer], roots, intermediates, now, errors));
  };
  for (const root of roots) consider(root, true);
  for (const intermediate of intermediates) consider(intermediate, false);
  return found;
}

/** Verifies a presented chain (DER, leaf first) against the roots; returns the
 * verified chains, leaf first, or throws why none holds. */
export function verifyClientChain(presented: Buffer[], roots: Certificate[], now = new Date()): Certificate[][] {
  let certs: Certificate[];
  try {
    certs = presented.map((der) => new Certificate(der));
  } catch (err) {
    throw new AuthenticationError(`x509: malformed certificate: ${(err as Error).message}`);
  }
  const [leaf, ...intermediates] = certs;
  checkValidity(leaf, now);
  const errors: AuthenticationError[] = [];
  const chains = roots.some((r) => sameCertificate(r, leaf)) ? [[leaf]] : buildChains([leaf], roots, intermediates, now, errors);
  if (chains.length === 0) throw errors[0] ?? new AuthenticationError('x509: certificate signed by unknown authority');
  const usable = chains.filter((chain) => chain.every(allowsClientAuth));
  if (usable.length === 0) throw new AuthenticationError('x509: certificate specifies an incompatible key usage');
  return usable;
}

/** Serial number and key identifiers, as the error messages name a certificate. */
function certificateIdentifier(der: Buffer): string {
  const hex = (s?: string) => (s ? s.toUpperCase().match(/../g)!.join(':') : '');
  try {
    const cert = new x509.X509Certificate(der);
    const skid = cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    const akid = cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
    return `SN=${BigInt(`0x${cert.serialNumber}`)}, SKID=${hex(skid)}, AKID=${hex(akid)}`;
  } catch {
    return '<unparseable>';
  }
}

/** The user of a verified chain; undefined when the leaf names no common name. */
function userOf(chain: Certificate[]): Authenticated | undefined {
  const subject = chain[0].parsed.subjectName;
  const commonNames = subject.getField('CN');
  const username = commonNames[commonNames.length - 1];
  if (!username) return undefined;
  return { user: newUser(username, { groups: subject.getField('O') }), audiences: [], authenticator: 'x509' };
}

/** Verified chains are remembered this long (and never past a certificate's expiry). */
const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX_ENTRIES = 4096;

interface CachedResult {
  result: Authenticated | undefined;
  until: number;
}

export class X509Authenticator implements RequestAuthenticator {
  /** Chains verified before, by the digest of their DER: verifying signatures costs more than the rest of a request. */
  private readonly verified = new Map<string, CachedResult>();

  constructor(private readonly roots: Certificate[], private readonly clock: () => Date = () => new Date()) {}

  static fromPem(pem: string): X509Authenticator {
    return new X509Authenticator(parseCaBundle(pem));
  }

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    if (request.peerCertificates.length === 0 || this.roots.length === 0) return undefined;
    const now = this.clock();
    const key = createHash('sha256').update(Buffer.concat(request.peerCertificates)).digest('hex');
    const hit = this.verified.get(key);
    if (hit && hit.until > now.getTime()) return hit.result;
    this.verified.delete(key);
    let chains: Certificate[][];
    try {
      chains = verifyClientChain(request.peerCertificates, this.roots, now);
    } catch (err) {
      throw new AuthenticationError(
        `verifying certificate ${certificateIdentifier(request.peerCertificates[0])} failed: ${(err as Error).message}`);
    }
    const expiry = Math.min(...chains.flat().map((c) => c.parsed.notAfter.getTime()));
    const found = chains.map(userOf).find((user) => user !== undefined);
    const result = found && { ...found, expiresAt: expiry };
    this.remember(key, result, expiry, now.getTime());
    return result;
  }

  private remember(key: string, result: Authenticated | undefined, expiry: number, now: number): void {
    if (this.verified.size >= CACHE_MAX_ENTRIES) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(key, { result, until: Math.min(now + CACHE_TTL_MS, expiry) });
  }
}
