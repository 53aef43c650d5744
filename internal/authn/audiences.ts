// Audiences of tokens. A review may ask whether a token is valid for some
// audiences; empty means the server's own API audiences. Which authenticator
// verifies a JWT is told by the issuer it claims.
import { decodeJwt } from 'jose';

/** The audiences in both lists, in the order of the first. */
export const intersect = (a: string[], b: string[]): string[] => a.filter((x) => b.includes(x));

/** For tokens that name no audience (bootstrap, static): valid for the API's audiences only,
 * so a review asking for other audiences does not recognise them. */
export function audienceAgnostic<T extends { audiences: string[] }>(found: T, requested: string[], apiAudiences: string[]): T | undefined {
  if (requested.length === 0) return found;
  const common = intersect(requested, apiAudiences);
  return common.length ? { ...found, audiences: common } : undefined;
}

/** The issuer a token claims, read before any check; undefined when it is not a JWT. */
export function unverifiedIssuer(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** A JWT's `aud` claim as a list (a string or a list of strings). */
export const audiencesOf = (aud: unknown): string[] =>
  (typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : []);
