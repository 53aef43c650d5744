// URL library. Parsing follows the platform's rules: the text must be an
// absolute URI or an absolute path, and the parts are returned as the request
// line would carry them.
import { runtimeError } from './errors.js';
import { URL_TYPE } from './typenames.js';

const CONTROL = /[\x00-\x1f\x7f]/;
const UNRESERVED = /[A-Za-z0-9\-_.~]/;

function unhex(c: string): number {
  return parseInt(c, 16);
}

/** Decodes %XX escapes; host names additionally allow only a fixed set of characters. */
function unescape(s: string, host: boolean): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error(`invalid URL escape "${s.slice(i, i + 3)}"`);
      bytes.push(unhex(hex));
      i += 2;
      continue;
    }
    if (host && c.charCodeAt(0) < 0x80 && !UNRESERVED.test(c) && !`!$&'()*+,;=:[]<>"`.includes(c)) {
      throw new Error(`invalid character "${c}" in host name`);
    }
    bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function escapePath(path: string): string {
  let out = '';
  for (const byte of Buffer.from(path, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && (UNRESERVED.test(c) || '$&+,/:;=@'.includes(c)) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function validEncodedPath(s: string): boolean {
  for (const c of s) {
    if (UNRESERVED.test(c) || "!$&'()*+,;=:@[]%/".includes(c)) continue;
    return false;
  }
  return true;
}

const validOptionalPort = (port: string): boolean => port === '' || /^:\d*$/.test(port);

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port "${colonPort}" after host`);
  } else {
    const i = host.lastIndexOf(':');
    if (i >= 0 && !validOptionalPort(host.slice(i))) throw new Error(`invalid port "${host.slice(i)}" after host`);
  }
  return unescape(host, true);
}

function splitScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) { if (i === 0) return ['', raw]; continue; }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

interface UrlParts { scheme: string; host: string; path: string; rawPath: string; rawQuery: string; opaque: string }

function parse(raw: string, viaRequest: boolean): UrlParts {
  if (CONTROL.test(raw)) throw new Error('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new Error('empty url');
  const url: UrlParts = { scheme: '', host: '', path: '', rawPath: '', rawQuery: '', opaque: '' };
  if (raw === '*') return { ...url, path: '*' };
  let [scheme, rest] = splitScheme(raw);
  url.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, url.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') return { ...url, opaque: rest };
    if (viaRequest) throw new Error('invalid URI for request');
    if (rest.split('/')[0].includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    [authority, rest] = slash >= 0 ? [authority.slice(0, slash), authority.slice(slash)] : [authority, ''];
    url.host = parseHost(authority.slice(authority.lastIndexOf('@') + 1));
  }
  url.path = unescape(rest, false);
  if (escapePath(url.path) !== rest) url.rawPath = rest;
  return url;
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(host.slice(colon))) [host, port] = [host.slice(0, colon), host.slice(colon + 1)];
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

function queryUnescape(s: string): string | undefined {
  try { return unescape(s.replace(/\+/g, ' '), false); } catch { return undefined; }
}

export class UrlValue {
  readonly celTypeName = URL_TYPE;

  constructor(private readonly text: string, private readonly parts: UrlParts) {}

  scheme(): string { return this.parts.scheme; }
  host(): string { return this.parts.host; }
  hostname(): string { return splitHostPort(this.parts.host)[0]; }
  port(): string { return splitHostPort(this.parts.host)[1]; }

  escapedPath(): string {
    const { rawPath, path } = this.parts;
    if (rawPath && validEncodedPath(rawPath) && unescape(rawPath, false) === path) return rawPath;
    return path === '*' ? '*' : escapePath(path);
  }

  query(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const pair of this.parts.rawQuery.split('&')) {
      if (pair === '' || pair.includes(';')) continue;
      const eq = pair.indexOf('=');
      const key = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
      const value = queryUnescape(eq < 0 ? '' : pair.slice(eq + 1));
      if (key === undefined || value === undefined) continue;
      out.set(key, [...(out.get(key) ?? []), value]);
    }
    return out;
  }

  equals(other: unknown): boolean {
    return other instanceof UrlValue && other.text === this.text;
  }

  toJSON(): string {
    return this.text;
  }
}

/** Parses an absolute URI or absolute path; throws a runtime error otherwise. */
export function toUrl(text: string): UrlValue {
  try {
    parse(text, true);
    const hash = text.indexOf('#');
    return new UrlValue(text, parse(hash >= 0 ? text.slice(0, hash) : text, false));
  } catch (err) {
    throw runtimeError(`URL parse error during conversion from string: parse "${text}": ${(err as Error).message}`);
  }
}

export function isUrl(text: string): boolean {
  try { parse(text, true); return true; } catch { return false; }
}
