// IPv4 and IPv6 addresses and CIDRs as big integers, for validation and containment.

export interface Cidr {
  family: 4 | 6;
  /** The address as written (host bits kept). */
  addr: bigint;
  prefix: number;
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => (n << 8n) | BigInt(Number(p)), 0n);
}

function parseV6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.split('::').length > 2) return undefined;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined): number[] | undefined => {
    if (!s) return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (const [i, p] of parts.entries()) {
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const h = groups(head);
  const t = groups(tail);
  if (!h || !t) return undefined;
  const missing = 8 - h.length - t.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...h, ...Array(tail === undefined ? 0 : missing).fill(0), ...t].reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

export const isIPv4 = (text: string): boolean => parseV4(text) !== undefined;
export const isIP = (text: string): boolean => parseV4(text) !== undefined || parseV6(text) !== undefined;

/** `10.0.0.0/8`, `2001:db8::/32`; undefined when malformed. */
export function parseCidr(text: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const prefix = Number(m[2]);
  const v4 = parseV4(m[1]);
  if (v4 !== undefined) return prefix <= 32 ? { family: 4, addr: v4, prefix } : undefined;
  const v6 = parseV6(m[1]);
  return v6 !== undefined && prefix <= 128 ? { family: 6, addr: v6, prefix } : undefined;
}

const bits = (c: Cidr) => (c.family === 4 ? 32 : 128);

/** The network part of a CIDR's address. */
const network = (c: Cidr, prefix = c.prefix) => c.addr >> BigInt(bits(c) - prefix);

/** True when `inner` is a strict subset of `outer`: same family, longer prefix, inside its range. */
export function strictlyContains(outer: Cidr, inner: Cidr): boolean {
  return outer.family === inner.family && inner.prefix > outer.prefix && network(inner, outer.prefix) === network(outer);
}

/** The address `offset` places after the network address of a CIDR, as text. */
export function addressAt(c: Cidr, offset: bigint): string {
  const base = network(c) << BigInt(bits(c) - c.prefix);
  const n = base + offset;
  if (c.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => ((n >> s) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** How many addresses a CIDR holds. */
export const sizeOf = (c: Cidr): bigint => 1n << BigInt(bits(c) - c.prefix);
