// The IP and CIDR library (release 1.31): addresses and prefixes parsed as the
// platform parses them (no zones, no IPv4-mapped IPv6, no leading zeros in IPv4),
// printed in canonical form.
import { runtimeError } from './errors.js';
import { CIDR_TYPE, IP_TYPE } from './typenames.js';

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** 4 or 16 bytes, or undefined when the text is no address. */
function parseBytes(text: string): number[] | undefined {
  if (IPV4.test(text)) return text.split('.').map(Number);
  if (!text.includes(':') || text.includes('%')) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes('.')) {
        if (!IPV4.test(item)) return undefined;
        const [a, b, c, d] = item.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(item)) {
        out.push(parseInt(item, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return undefined;
  return [...head, ...Array(missing).fill(0), ...tail].flatMap((g) => [g >> 8, g & 0xff]);
}

function format(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = Math.max(i, j - 1);
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const isMapped = (b: readonly number[]): boolean => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

export class IPValue {
  readonly celTypeName = IP_TYPE;
  constructor(readonly bytes: readonly number[]) {}
  static parse(text: string): IPValue {
    const bytes = parseBytes(text);
    if (!bytes) throw runtimeError(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ParseAddr(${JSON.stringify(text)}): unable to parse IP`);
    if (isMapped(bytes)) throw runtimeError(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
    return new IPValue(bytes);
  }
  family(): bigint { return this.bytes.length === 4 ? 4n : 6n; }
  isUnspecified(): boolean { return this.bytes.every((x) => x === 0); }
  isLoopback(): boolean { return this.bytes.length === 4 ? this.bytes[0] === 127 : this.bytes.slice(0, 15).every((x) => x === 0) && this.bytes[15] === 1; }
  isLinkLocalMulticast(): boolean {
    return this.bytes.length === 4 ? this.bytes[0] === 224 && this.bytes[1] === 0 && this.bytes[2] === 0 : this.bytes[0] === 0xff && (this.bytes[1] & 0x0f) === 0x02;
  }
  isLinkLocalUnicast(): boolean {
    return this.bytes.length === 4 ? this.bytes[0] === 169 && this.bytes[1] === 254 : this.bytes[0] === 0xfe && (this.bytes[1] & 0xc0) === 0x80;
  }
  isGlobalUnicast(): boolean {
    if (this.isUnspecified() || this.isLoopback() || this.isLinkLocalUnicast()) return false;
    if (this.bytes.length === 4) return this.bytes[0] < 224 && !this.bytes.every((x) => x === 255);
    return this.bytes[0] !== 0xff;
  }
  equals(o: IPValue): boolean { return format(this.bytes) === format(o.bytes); }
  toString(): string { return format(this.bytes); }
}

export class CIDRValue {
  readonly celTypeName = CIDR_TYPE;
  constructor(readonly ip: IPValue, readonly prefix: number) {}
  static parse(text: string): CIDRValue {
    const slash = text.indexOf('/');
    const bytes = slash < 0 ? undefined : parseBytes(text.slice(0, slash));
    const bits = slash < 0 ? NaN : /^\d{1,3}$/.test(text.slice(slash + 1)) ? Number(text.slice(slash + 1)) : NaN;
    if (!bytes || !(bits <= bytes.length * 8)) {
      throw runtimeError(`network address ${JSON.stringify(text)} parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(text)}): bad prefix`);
    }
    if (isMapped(bytes)) throw runtimeError(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
    return new CIDRValue(new IPValue(bytes), bits);
  }
  masked(): CIDRValue {
    const bytes = this.ip.bytes.map((b, i) => {
      const keep = Math.max(0, Math.min(8, this.prefix - 8 * i));
      return b & (0xff << (8 - keep)) & 0xff;
    });
    return new CIDRValue(new IPValue(bytes), this.prefix);
  }
  containsIP(ip: IPValue): boolean {
    if (ip.bytes.length !== this.ip.bytes.length) return false;
    return new CIDRValue(ip, this.prefix).masked().ip.equals(this.masked().ip);
  }
  containsCIDR(o: CIDRValue): boolean { return o.prefix >= this.prefix && this.containsIP(o.ip); }
  equals(o: CIDRValue): boolean { return this.prefix === o.prefix && this.ip.equals(o.ip); }
  toString(): string { return `${this.ip.toString()}/${this.prefix}`; }
}

export const isIP = (text: string): boolean => { const b = parseBytes(text); return b !== undefined && !isMapped(b); };
export const isCIDR = (text: string): boolean => { try { CIDRValue.parse(text); return true; } catch { return false; } };
