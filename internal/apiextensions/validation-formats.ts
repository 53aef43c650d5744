// The string formats a custom resource schema may declare, checked as the
// platform's schema validator checks them; any other format is not checked.
import { isIP } from 'node:net';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const MAC = /^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){7}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){19}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}([0-9A-Fa-f]{4})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/;
const DURATION = /^(-?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$|^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const CREDIT_CARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

function validURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  try {
    return new URL(s).protocol.length > 1;
  } catch {
    return false;
  }
}

function validCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const family = isIP(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function isbn10(s: string): boolean {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(c)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (c[i] === 'X' ? 10 : Number(c[i])) * (10 - i);
  return sum % 11 === 0;
}

function isbn13(s: string): boolean {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(c)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(c[i]) * (i % 2 === 0 ? 1 : 3);
  return sum % 10 === 0;
}

/** Checks by normalized format name (dashes removed, as the platform's registry names them). */
const FORMATS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => BSON_OBJECT_ID.test(s),
  uri: validURI,
  email: (s) => EMAIL.test(s.trim()),
  hostname: (s) => HOSTNAME.test(s),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: validCIDR,
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: (s) => CREDIT_CARD.test(s.replace(/[^0-9]/g, '')),
  ssn: (s) => SSN.test(s),
  hexcolor: (s) => HEX_COLOR.test(s),
  rgbcolor: (s) => RGB_COLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: validDate,
  duration: (s) => DURATION.test(s),
  datetime: (s) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))) && validDate(s.slice(0, 10)),
  k8sshortname: (s) => s.length <= 63 && SHORT_NAME.test(s),
  k8slongname: (s) => s.length <= 253 && LONG_NAME.test(s),
};

/** The check of a declared format, or undefined when the format is not one the server checks. */
export function formatCheck(format: string | undefined): ((s: string) => boolean) | undefined {
  return format ? FORMATS[format.replaceAll('-', '')] : undefined;
}
