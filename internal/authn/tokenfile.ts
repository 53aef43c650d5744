// Static bearer tokens from --token-auth-file: one CSV record per token,
// `token,user,uid[,groups...]`, where a groups column may hold several
// comma-separated groups when quoted ("group1,group2"). Read once at start.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { audienceAgnostic } from './audiences.js';
import { parseCsv } from './csv.js';
import { newUser, type Authenticated, type TokenAuthenticator, type User } from './types.js';

export class TokenFileError extends Error {}

export interface TokenFile {
  tokens: Map<string, User>;
  /** Records that were skipped or overrode an earlier one. */
  warnings: string[];
}

const groupsOf = (columns: string[]): string[] =>
  columns.flatMap((c) => c.split(',')).filter((g) => g !== '');

/** Parses the content of a token file; source names it in messages. */
export function parseTokenFile(text: string, source: string): TokenFile {
  let records: string[][];
  try {
    records = parseCsv(text);
  } catch (err) {
    throw new TokenFileError(`token file '${source}': ${(err as Error).message}`);
  }
  const tokens = new Map<string, User>();
  const warnings: string[] = [];
  records.forEach((record, index) => {
    const recordNumber = index + 1;
    if (record.length < 3) {
      throw new TokenFileError(
        `token file '${source}' must have at least 3 columns (token, user name, user uid), found ${record.length} in record ${recordNumber}`);
    }
    const [token, username, uid, ...groupColumns] = record;
    if (token === '') {
      warnings.push(`empty token has been found in token file '${source}', record number '${recordNumber}'`);
      return;
    }
    if (tokens.has(token)) warnings.push(`duplicate token has been found in token file '${source}', record number '${recordNumber}'`);
    tokens.set(token, newUser(username, { uid, groups: groupsOf(groupColumns) }));
  });
  return { tokens, warnings };
}

/** Reads a token file; unreadable or malformed files throw TokenFileError. */
export function loadTokenFile(path: string): TokenFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TokenFileError(`cannot read token file '${path}': ${(err as Error).message}`);
  }
  return parseTokenFile(text, path);
}

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Tokens are looked up by their SHA-256 digest, never by the token itself, so the
 * time a lookup takes says nothing about how much of a token was right. */
export class TokenFileAuthenticator implements TokenAuthenticator {
  private readonly byDigest = new Map<string, User>();

  /** apiAudiences: the server's own, the only ones static tokens are valid for. */
  constructor(tokens: Map<string, User>, private readonly apiAudiences: string[] = []) {
    for (const [token, user] of tokens) this.byDigest.set(digest(token), user);
  }

  async authenticateToken(token: string, audiences: string[] = []): Promise<Authenticated | undefined> {
    const user = this.byDigest.get(digest(token));
    if (!user) return undefined;
    return audienceAgnostic({ user: { ...user, groups: [...user.groups], extra: {} }, audiences: [], authenticator: 'token-file' }, audiences, this.apiAudiences);
  }
}
