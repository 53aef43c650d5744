// Resource version semantics of get and list, and continue tokens.
import { badRequest, gone } from '../internal/apimachinery/status.js';
import { GROUP_META } from '../internal/names/index.js';

/** How a read is served: the newest state, any cached state, at least a version, or exactly one. */
export type ReadMode = 'MostRecent' | 'Any' | 'NotOlderThan' | 'Exact';

export interface ListPlan {
  mode: ReadMode;
  /** The version asked for (NotOlderThan / Exact) or encoded in the continue token. */
  revision: number;
  limit: number;
  /** The key to resume after, from a continue token. */
  continueAfter: string;
}

export function parseResourceVersion(rv: string | null): number | undefined {
  if (rv === null || rv === '') return undefined;
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) throw badRequest(`invalid resource version "${rv}"`);
  return Number(rv);
}

function parseLimit(text: string | null): number {
  if (text === null || text === '') return 0;
  if (!/^-?\d+$/.test(text)) throw badRequest(`limit: Invalid value: "${text}": must be an integer`);
  return Math.max(0, Number(text));
}

/** The read mode of a get, by the table of document 1. */
export function getPlan(query: URLSearchParams): { mode: ReadMode; revision: number } {
  const rv = parseResourceVersion(query.get('resourceVersion'));
  if (rv === undefined) return { mode: 'MostRecent', revision: 0 };
  return rv === 0 ? { mode: 'Any', revision: 0 } : { mode: 'NotOlderThan', revision: rv };
}

/** The read mode of a list, by the table of document 1; invalid combinations answer 400. */
export function listPlan(query: URLSearchParams): ListPlan {
  const rvText = query.get('resourceVersion');
  const rv = parseResourceVersion(rvText);
  const match = query.get('resourceVersionMatch') ?? '';
  const limit = parseLimit(query.get('limit'));
  const token = query.get('continue') ?? '';
  if (match && !['Exact', 'NotOlderThan'].includes(match)) {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  }
  if (match && rv === undefined) throw badRequest(`resourceVersionMatch is forbidden unless resourceVersion is provided`);
  if (token) {
    if (match) throw badRequest('resourceVersionMatch is forbidden when continue is provided');
    if (rv !== undefined && rv !== 0) throw badRequest(`specifying resource version is not allowed when using continue`);
    const { revision, start } = decodeContinue(token);
    return { mode: 'Exact', revision, limit, continueAfter: start };
  }
  if (match === 'Exact') {
    if (rv === 0) throw badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    return { mode: 'Exact', revision: rv!, limit, continueAfter: '' };
  }
  if (rv === undefined) return { mode: 'MostRecent', revision: 0, limit, continueAfter: '' };
  if (rv === 0) return { mode: 'Any', revision: 0, limit, continueAfter: '' };
  if (match === 'NotOlderThan' || limit === 0) return { mode: 'NotOlderThan', revision: rv, limit, continueAfter: '' };
  return { mode: 'Exact', revision: rv, limit, continueAfter: '' };
}

const TOKEN_VERSION = `${GROUP_META}/v1`;

/** A continue token: the snapshot revision and the last key returned. */
export function encodeContinue(revision: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv: revision, start })).toString('base64url');
}

export function decodeContinue(token: string): { revision: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (parsed.v !== TOKEN_VERSION || !Number.isSafeInteger(parsed.rv) || parsed.rv <= 0 || typeof parsed.start !== 'string' || !parsed.start) {
      throw new Error('unknown token format');
    }
    return { revision: parsed.rv, start: parsed.start };
  } catch (err) {
    throw badRequest(`continue key is not valid: ${(err as Error).message}`);
  }
}

export const expiredContinue = () => gone(
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
