// Resource version semantics of get and list, and continue tokens.
import { badRequest, gone } from '../internal/apimachinery/status.js';
import { GROUP_META } from '../internal/names/index.js';

/** How a read is served: the newest state, any cached state, at least a version, or exactly one. */
export type ReadMode = 'MostRecent' | 'Any' | 'NotOlderThan' | 'Exact';

/** How a read wants its state: the mode and the version it is relative to. */
export interface ReadPlan {
  mode: ReadMode;
  /** The version asked for (NotOlderThan / Exact) or encoded in the continue token. */
  revision: number;
}

export interface ListPlan extends ReadPlan {
  limit: number;
  /** The key to resume after, from a continue token. */
  continueAfter: string;
}

export function parseResourceVersion(rv: string | null): number | undefined {
  if (rv === null || rv === '') return undefined;
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) throw badRequest(`invalid resource version "${rv}"`);
  return Number(rv);
}

/** The range of a 64-bit limit, as upstream decodes it. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A limit: a 64-bit integer (negative means none); one beyond any collection's size is capped where storage can count. */
function parseLimit(text: string | null): number {
  if (text === null || text === '') return 0;
  if (!/^-?\d+$/.test(text)) throw badRequest(`limit: Invalid value: "${text}": must be an integer`);
  const value = BigInt(text);
  if (value > INT64_MAX || value < INT64_MIN) throw badRequest(`limit: Invalid value: "${text}": value out of range`);
  return value <= 0n ? 0 : Number(value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : value);
}

/** timeoutSeconds of a list or watch must be a whole number of seconds, whether or not a watch uses it. */
function checkTimeout(text: string | null): void {
  if (text !== null && !/^\d+$/.test(text)) throw badRequest(`timeoutSeconds: Invalid value: "${text}"`);
}

/** The read mode of a get, by the table of document 1. */
export const getPlan = (query: URLSearchParams): ReadPlan => readPlan(parseResourceVersion(query.get('resourceVersion')));

/** The read mode of a resourceVersion as a get (and a watch's initial state) takes it: none is the newest, 0 any, else at least it. */
export function readPlan(rv: number | undefined): ReadPlan {
  if (rv === undefined) return { mode: 'MostRecent', revision: 0 };
  return rv === 0 ? { mode: 'Any', revision: 0 } : { mode: 'NotOlderThan', revision: rv };
}

/** The read mode of a list, by the table of document 1; invalid combinations answer 400. */
export function listPlan(query: URLSearchParams): ListPlan {
  const rvText = query.get('resourceVersion');
  const rv = parseResourceVersion(rvText);
  const match = query.get('resourceVersionMatch') ?? '';
  const limit = parseLimit(query.get('limit'));
  checkTimeout(query.get('timeoutSeconds'));
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

/** A continue token resumes only inside the collection it is sent to: a key outside it is not valid, as upstream refuses a key outside its prefix. */
export function checkContinueWithin(start: string, prefix: string): void {
  if (start && !start.startsWith(prefix)) throw badRequest(`invalid continue token: continue key is not valid: ${JSON.stringify(start)} is outside the collection`);
}

export const expiredContinue = () => gone(
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
