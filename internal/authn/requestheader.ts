// The authenticating proxy (--requestheader-*): a front proxy that has
// authenticated the user says who it is in headers. The headers count only on a
// request whose client certificate chains to --requestheader-client-ca-file
// (and, when --requestheader-allowed-names is set, names one of them as its
// common name); from anyone else they are ignored, and the gateway drops them.
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

export class RequestHeaderAuthenticator implements RequestAuthenticator {
  constructor(private readonly roots: Certificate[], private readonly config: RequestHeaderConfig,
    private readonly clock: () => Date = () => new Date()) {}

  static fromFile(caFile: string, config: RequestHeaderConfig): RequestHeaderAuthenticator {
    return new RequestHeaderAuthenticator(parseCaBundle(readFileSync(caFile, 'utf8')), config);
  }

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    if (request.peerCertificates.length === 0) return undefined;
    let chains: Certificate[][];
    try {
      chains = verifyClientChain(request.peerCertificates, this.roots, this.clock());
    } catch (err) {
      throw new AuthenticationError(`request header authentication: ${(err as Error).message}`);
    }
    const commonName = chains[0][0].parsed.subjectName.getField('CN').at(-1) ?? '';
    if (this.config.allowedNames.length && !this.config.allowedNames.includes(commonName)) {
      throw new AuthenticationError(`request header authentication: x509: subject with cn=${commonName} is not in the allowed list`);
    }
    return userFromHeaders(request.headers, this.config);
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
