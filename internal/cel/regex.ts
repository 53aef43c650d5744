// Regular expressions in RE2 syntax, run on the JavaScript engine. Patterns are
// translated where the two dialects differ (inline flags, \A and \z, \Q..\E,
// POSIX classes, Perl escapes of punctuation) and rejected where RE2 has no
// meaning for them (lookaround, backreferences), so a rule means the same here
// as on any other implementation of the platform.
import { runtimeError } from './errors.js';

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ', upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};
const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/');
const SIMPLE_ESCAPES: Record<string, string> = {
  d: '\\d', D: '\\D', w: '\\w', W: '\\W', b: '\\b', B: '\\B', n: '\\n', t: '\\t', r: '\\r', f: '\\f', v: '\\v',
  a: '\\x07', A: '(?<![\\s\\S])', z: '(?![\\s\\S])', s: '[\\t\\n\\f\\r ]', S: '[^\\t\\n\\f\\r ]',
};
const CLASS_ESCAPES: Record<string, string> = { ...SIMPLE_ESCAPES, s: '\\t\\n\\f\\r ', S: '\\S', b: '\\x08' };
const MAX_REPEAT = 1000;

class SyntaxFault extends Error {}

const literal = (ch: string, inClass = false): string => (JS_SYNTAX.has(ch) || (inClass && ch === '-') ? `\\${ch}` : ch);

/** Translates RE2 syntax to an equivalent JavaScript pattern and flags. */
class Translator {
  private i = 0;
  private out = '';
  private flags = 'u';
  /** Per open group (the pattern itself first): how many flag scopes `(?i)` opened in it, closed with the group. */
  private readonly scopes: number[] = [0];

  constructor(private readonly src: string) {}

  run(): { source: string; flags: string } {
    this.leadingFlags();
    while (this.i < this.src.length) this.token();
    this.out += ')'.repeat(this.scopes[0]);
    return { source: this.out, flags: this.flags };
  }

  private leadingFlags(): void {
    const m = /^\(\?([imsU]+)\)/.exec(this.src);
    if (!m) return;
    if (m[1].includes('U')) throw new SyntaxFault('invalid or unsupported Perl syntax: `(?U`');
    for (const f of new Set(m[1])) this.flags += f;
    this.i = m[0].length;
  }

  private token(): void {
    const ch = this.src[this.i++];
    switch (ch) {
      case '\\': this.out += this.escape(false); break;
      case '[': this.charClass(); break;
      case '(': this.group(); break;
      case ')': this.out += `${')'.repeat(this.scopes.length > 1 ? this.scopes.pop()! : 0)})`; break;
      case '.': this.out += this.flags.includes('s') ? '[\\s\\S]' : '[^\\n]'; break;
      case '{': this.out += this.repeat(); break;
      case '}': this.out += '\\}'; break;
      case ']': this.out += '\\]'; break;
      default: this.out += ch;
    }
  }

  private group(): void {
    const rest = this.src.slice(this.i);
    const flags = /^\?([ims]+)([):])/.exec(rest);
    if (flags && flags[2] === ')') {
      // Flags from here to the end of the group: a modifier group closed where the group closes.
      this.out += `(?${[...new Set(flags[1])].join('')}:`;
      this.scopes[this.scopes.length - 1]++;
      this.i += flags[0].length;
      return;
    }
    this.scopes.push(0);
    if (flags) { this.out += `(?${[...new Set(flags[1])].join('')}:`; this.i += flags[0].length; return; }
    if (rest.startsWith('?P<')) { this.out += '(?<'; this.i += 3; return; }
    if (rest.startsWith('?:') || rest.startsWith('?<') && /^\?<\w/.test(rest)) { this.out += '(?'; this.i += 1; return; }
    if (rest.startsWith('?')) throw new SyntaxFault(`invalid or unsupported Perl syntax: \`(${rest.slice(0, 2)}\``);
    this.out += '(';
  }

  private repeat(): string {
    const m = /^(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
    if (!m) return '\\{';
    if (Number(m[1]) > MAX_REPEAT || (m[3] && Number(m[3]) > MAX_REPEAT)) {
      throw new SyntaxFault(`invalid repeat count: \`{${m[0]}\``);
    }
    if (m[3] && Number(m[3]) < Number(m[1])) throw new SyntaxFault(`invalid repeat count: \`{${m[0]}\``);
    this.i += m[0].length;
    return `{${m[0]}`;
  }

  private escape(inClass: boolean): string {
    const ch = this.src[this.i++];
    if (ch === undefined) throw new SyntaxFault('trailing backslash at end of expression: ``');
    const table = inClass ? CLASS_ESCAPES : SIMPLE_ESCAPES;
    if (table[ch]) return table[ch];
    if (ch === 'Q') return this.quoted(inClass);
    if (ch === 'x') return this.hexEscape();
    if (ch === 'p' || ch === 'P') return this.unicodeClass(ch);
    if (ch >= '0' && ch <= '7') return this.octal(ch);
    if (/[0-9A-Za-z]/.test(ch)) throw new SyntaxFault(`invalid escape sequence: \`\\${ch}\``);
    return literal(ch, inClass);
  }

  private quoted(inClass: boolean): string {
    const end = this.src.indexOf('\\E', this.i);
    const text = this.src.slice(this.i, end < 0 ? undefined : end);
    this.i = end < 0 ? this.src.length : end + 2;
    return Array.from(text, (c) => literal(c, inClass)).join('');
  }

  private hexEscape(): string {
    const braced = /^\{([0-9A-Fa-f]{1,8})\}/.exec(this.src.slice(this.i));
    if (braced) { this.i += braced[0].length; return `\\u{${braced[1]}}`; }
    const two = /^[0-9A-Fa-f]{2}/.exec(this.src.slice(this.i));
    if (!two) throw new SyntaxFault('invalid escape sequence: `\\x`');
    this.i += 2;
    return `\\x${two[0]}`;
  }

  private octal(first: string): string {
    if (first === '0' || /^[0-7]{2}/.test(this.src.slice(this.i))) {
      const m = /^[0-7]{0,2}/.exec(this.src.slice(this.i))![0];
      this.i += m.length;
      return `\\u{${parseInt(first + m, 8).toString(16)}}`;
    }
    throw new SyntaxFault(`invalid escape sequence: \`\\${first}\``);
  }

  private unicodeClass(kind: string): string {
    const m = /^(?:\{(\^?)(\w+)\}|(\w))/.exec(this.src.slice(this.i));
    if (!m) throw new SyntaxFault(`invalid character class range: \`\\${kind}\``);
    this.i += m[0].length;
    const name = m[2] ?? m[3];
    const negated = (kind === 'P') !== (m[1] === '^');
    const prop = name.length <= 2 ? name : name === 'Any' ? 'Any' : `Script=${name}`;
    return `\\${negated ? 'P' : 'p'}{${prop}}`;
  }

  private charClass(): void {
    let body = '';
    if (this.src[this.i] === '^') { body += '^'; this.i++; }
    if (this.src[this.i] === ']') { body += '\\]'; this.i++; }
    for (;;) {
      if (this.i >= this.src.length) throw new SyntaxFault(`missing closing ]: \`[${this.src.slice(this.i)}\``);
      const ch = this.src[this.i++];
      if (ch === ']') break;
      if (ch === '\\') { body += this.escape(true); continue; }
      if (ch === '[' && this.src[this.i] === ':') { body += this.posixClass(); continue; }
      body += ch === '[' || ch === '/' ? `\\${ch}` : ch;
    }
    this.out += `[${body}]`;
  }

  private posixClass(): string {
    const m = /^:(\^?)(\w+):\]/.exec(this.src.slice(this.i));
    if (!m || !POSIX_CLASSES[m[2]]) throw new SyntaxFault('invalid character class range');
    if (m[1]) throw new SyntaxFault('negated POSIX classes are not supported');
    this.i += m[0].length;
    return POSIX_CLASSES[m[2]];
  }
}

const cache = new Map<string, RegExp>();
const CACHE_LIMIT = 1000;

/** Compiles an RE2 pattern; throws a runtime error naming the fault when it is invalid. */
export function compileRegex(pattern: string): RegExp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re: RegExp;
  try {
    const { source, flags } = new Translator(pattern).run();
    re = new RegExp(source, flags);
  } catch (err) {
    const reason = err instanceof SyntaxFault ? err.message : (err as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /s, '').toLowerCase();
    throw runtimeError(`error parsing regexp: ${reason}: \`${pattern}\``);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(pattern, re);
  return re;
}

export function matches(s: string, pattern: string): boolean {
  return compileRegex(pattern).test(s);
}

function globalOf(re: RegExp): RegExp {
  return new RegExp(re.source, `${re.flags}g`);
}

/** The first match, or the empty string. */
export function find(s: string, pattern: string): string {
  return compileRegex(pattern).exec(s)?.[0] ?? '';
}

/** Successive non-overlapping matches, at most limit of them when limit is not negative. */
export function findAll(s: string, pattern: string, limit = -1n): string[] {
  const re = globalOf(compileRegex(pattern));
  const out: string[] = [];
  let pos = 0;
  let prevEnd = -1;
  while ((limit < 0n || out.length < Number(limit)) && pos <= s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) break;
    const end = m.index + m[0].length;
    let accept = true;
    if (end === pos) {
      // An empty match right after the previous match does not count.
      if (m.index === prevEnd) accept = false;
      pos += pos < s.length ? ((s.codePointAt(pos) ?? 0) > 0xffff ? 2 : 1) : 1;
    } else {
      pos = end;
    }
    prevEnd = end;
    if (accept) out.push(m[0]);
  }
  return out;
}
