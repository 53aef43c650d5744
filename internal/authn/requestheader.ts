// The authenticating proxy (--requestheader-*): a front proxy that has
// authenticated the user says who it is in headers. The headers count only on a
// request whose client certificate chains to --requestheader-client-ca-file
// (and, when --requestheader-allowed-names is set, names one of them as its
// common name); from anyone else they are ignored, and the gateway drops them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AuthenticationError, newUser, type Authenticated, type RequestAuthenticator, type RequestCredentials } from './types.js';
import { parseCaBundle, verifyClientChain, type Certificate } from './x509.js';

export interface RequestHeaderConfig {
  /** Header names, lower case, in order: the first with a value is the user name. */
  usernameHeaders: string[];
  /** Header names, lower case: every value of each is a group. */
  groupHeaders: string[];
  /** Prefixes, lower case: `<prefix><key>: value` adds value to extra[key]. */
  extraHeaderPrefixes: string[];
  /** Common names the proxy's certificate may carry; empty: any. */
  allowedNames: string[];
}

/** The headers every server strips after authentication, configured or not (the suggested names). */
const STANDARD: Omit<RequestHeaderConfig, 'allowedNames'> = {
  usernameHeaders: ['x-remote-user'], groupHeaders: ['x-remote-group'], extraHeaderPrefixes: ['x-remote-extra-'],
};

/** An extra key as sent: lower case, then %-decoded; a key that does not decode is kept as sent. */
function extraKey(encoded: string): string {
  const lower = encoded.toLowerCase();
  try {
    return decodeURIComponent(lower);
  } catch {
    return lower;
  }
}

function userFromHeaders(headers: Map<string, string[]>, config: RequestHeaderConfig): Authenticated | undefined {
  const username = config.usernameHeaders.map((h) => headers.get(h)?.[0] ?? '').find((v) => v !== '');
  if (!username) return undefined;
  const groups = config.groupHeaders.flatMap((h) => headers.get(h) ?? []).filter((g) => g !== '');
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes) {
    for (const [name, values] of headers) {
      if (!name.startsWith(prefix)) continue;
      const key = extraKey(name.slice(prefix.length));
      extra[key] = [...(extra[key] ?? []), ...values];
    }
  }
  return { user: newUser(username, { groups, extra }), audiences: [], authenticator: 'requestheader' };
}

/** A chain's verdict is kept this long (never past its expiry): every client certificate, the
 * admin's included, is checked against the proxy CA on each request. */
const VERDICT_TTL_MS = 5 * 60_000;
const MAX_VERDICTS = 4096;

/** Why a chain cannot speak for a proxy, or empty when it can. */
interface Verdict {
  refusal: string;
  until: number;
}

export class RequestHeaderAuthenticator implements RequestAuthenticator {
  private readonly verdicts = new Map<string, Verdict>();

  constructor(private readonly roots: Certificate[], private readonly config: RequestHeaderConfig,
    private readonly clock: () => Date = () => new Date()) {}

  static fromFile(caFile: string, config: RequestHeaderConfig): RequestHeaderAuthenticator {
    return new RequestHeaderAuthenticator(parseCaBundle(readFileSync(caFile, 'utf8')), config);
  }

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    if (request.peerCertificates.length === 0) return undefined;
    const { refusal } = this.verdictOf(request.peerCertificates);
    if (refusal) throw new AuthenticationError(`request header authentication: ${refusal}`);
    // A proxy's chain: whoever the request turns out to be depends on its headers.
    request.uncacheable = true;
    return userFromHeaders(request.headers, this.config);
  }

  private verdictOf(chain: Buffer[]): Verdict {
    const now = this.clock();
    const key = createHash('sha256').update(Buffer.concat(chain)).digest('hex');
    const known = this.verdicts.get(key);
    if (known && known.until > now.getTime()) return known;
    const verdict = this.verify(chain, now);
    this.verdicts.delete(key);
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(key, verdict);
    return verdict;
  }

  private verify(chain: Buffer[], now: Date): Verdict {
    const until = now.getTime() + VERDICT_TTL_MS;
    let chains: Certificate[][];
    try {
      chains = verifyClientChain(chain, this.roots, now);
    } catch (err) {
      return { refusal: (err as Error).message, until };
    }
    const expiry = Math.min(...chains[0].map((c) => c.parsed.notAfter.getTime()));
    const commonName = chains[0][0].parsed.subjectName.getField('CN').at(-1) ?? '';
    const allowed = this.config.allowedNames.length === 0 || this.config.allowedNames.includes(commonName);
    return { refusal: allowed ? '' : `x509: subject with cn=${commonName} is not in the allowed list`, until: Math.min(until, expiry) };
  }
}

/** The headers of a request that name a proxied identity (standard or configured) or carry a token:
 * removed from the request once it is authenticated, whoever sent it. */
export function credentialHeaderNames(present: Iterable<string>, config?: RequestHeaderConfig): string[] {
  const exact = new Set(['authorization', ...STANDARD.usernameHeaders, ...STANDARD.groupHeaders,
    ...(config?.usernameHeaders ?? []), ...(config?.groupHeaders ?? [])]);
  const prefixes = [...STANDARD.extraHeaderPrefixes, ...(config?.extraHeaderPrefixes ?? [])];
  return [...present].filter((name) => exact.has(name) || prefixes.some((p) => name.startsWith(p)));
}
