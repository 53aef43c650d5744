// Certificate issuing with ECDSA P-256 keys: a self-signed CA and leaf
// certificates it signs, as PEM that Node's TLS and Go clients both accept.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto, randomBytes } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
import { isIP } from 'node:net';

const crypto = webcrypto;
x509.cryptoProvider.set(crypto);

const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 3600 * 1000;
/** Certificates start an hour in the past so peers with a slow clock accept them. */
const CLOCK_SKEW_MS = 3600 * 1000;

export interface KeyPair {
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
}

export interface IssuedPem {
  certPem: string;
  keyPem: string;
}

export interface LeafSpec {
  commonName: string;
  organizations?: string[];
  /** IP addresses and DNS names of a serving certificate. */
  hosts?: string[];
  usage: 'server' | 'client';
  validityDays: number;
}

/** A positive 128-bit serial number, hex. */
const serialNumber = (): string => {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
};

const validity = (days: number) => {
  const now = Date.now();
  return { notBefore: new Date(now - CLOCK_SKEW_MS), notAfter: new Date(now + days * DAY_MS) };
};

const subjectName = (commonName: string, organizations: string[] = []): x509.JsonName =>
  [...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }];

async function generateKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/** A self-signed certificate authority. */
export async function createCa(commonName: string, validityDays: number): Promise<IssuedPem> {
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: subjectName(commonName),
    ...validity(validityDays),
    keys,
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: certificate.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

/** Loads a CA from its PEM certificate and PKCS#8 key. */
export async function loadCa(certPem: string, keyPem: string): Promise<KeyPair> {
  const privateKey = await crypto.subtle.importKey(
    'pkcs8', x509.PemConverter.decodeFirst(keyPem), keyAlgorithm, false, ['sign']);
  return { certificate: new x509.X509Certificate(certPem), privateKey };
}

const subjectAltNames = (hosts: string[]): x509.JsonGeneralName[] =>
  hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h }));

/** A leaf certificate for a server or a client, signed by the CA. */
export async function issueLeaf(ca: KeyPair, spec: LeafSpec): Promise<IssuedPem> {
  const keys = await generateKeys();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([spec.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey),
  ];
  if (spec.hosts?.length) extensions.push(new x509.SubjectAlternativeNameExtension(subjectAltNames(spec.hosts)));
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectName(spec.commonName, spec.organizations),
    issuer: ca.certificate.subjectName,
    ...validity(spec.validityDays),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm,
    extensions,
  });
  return { certPem: certificate.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}
