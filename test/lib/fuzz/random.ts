// A small seeded random source (mulberry32): the same seed draws the same
// requests, so a failure found once can be replayed.

/** The seed of a run: FUZZ_SEED when set, else the fixed default (`random` draws one). */
export function seedFromEnv(fixed: number): number {
  const text = process.env.FUZZ_SEED;
  if (!text) return fixed;
  if (text === 'random') return Math.floor(Math.random() * 2 ** 32);
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`FUZZ_SEED must be a non-negative integer or "random", not ${JSON.stringify(text)}`);
  return n >>> 0;
}

/** FUZZ_COUNT when set, else `fallback`. */
export function countFromEnv(fallback: number): number {
  const n = Number(process.env.FUZZ_COUNT ?? fallback);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`FUZZ_COUNT must be a positive integer, not ${JSON.stringify(process.env.FUZZ_COUNT)}`);
  return n;
}

/** Characters that break parsers, headers and keys: controls, NUL, separators, surrogates, RTL marks. */
const NASTY = ['\u0000', '\u0001', '\t', '\n', '\r', '\u001f', '\u007f', '\u0085', '\u00a0', '\u00ff', '\u2028', '\u2029', '\u202e',
  '\ufeff', '\ufffd', '\ud800', '\udfff', '\ud83d\ude00', '"', '\'', '\\', '/', '%', '%00', '%ZZ', '%E0', '..', '.', '*', '?', '#', '&', '=',
  ',', ';', ':', '{', '}', '[', ']', '$', '`', ' ', '~', '!', '@', '+', '<', '>', '|'];

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** A length drawn mostly small, sometimes large (up to max). */
  length(max: number): number {
    const r = this.next();
    return r < 0.6 ? this.int(8) : r < 0.9 ? this.int(64) : this.int(max + 1);
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }

  /** A string mixing letters and the characters that break things. */
  junk(maxLength = 40): string {
    const n = this.length(maxLength);
    let s = '';
    for (let i = 0; i < n; i++) {
      const r = this.next();
      s += r < 0.5 ? String.fromCharCode(97 + this.int(26)) : r < 0.8 ? this.pick(NASTY) : String.fromCodePoint(this.int(0x3000));
    }
    return s;
  }

  /** Some integer-looking text, often out of every range. */
  number(): string {
    return this.pick(['0', '-1', '1', '-0', '00', '1e3', '1.5', '0x10', ' 1', '+1', '9007199254740993', '99999999999999999999',
      '-9223372036854775809', '9223372036854775807', '-9223372036854775808', '18446744073709551616', 'NaN', 'Infinity', '']);
  }

  /** The same text with one random edit: a cut, a flipped byte, an insertion, a duplication. */
  mutateText(text: string): string {
    if (!text) return this.junk();
    const at = this.int(text.length);
    switch (this.int(5)) {
      case 0: return text.slice(0, at);
      case 1: return text.slice(0, at) + String.fromCharCode(this.int(256)) + text.slice(at + 1);
      case 2: return text.slice(0, at) + this.pick(NASTY) + text.slice(at);
      case 3: return text.slice(0, at) + text.slice(at, at + this.int(20)).repeat(2 + this.int(3)) + text.slice(at);
      default: return text.slice(at) + text.slice(0, at);
    }
  }
}
