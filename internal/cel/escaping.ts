// Property names become expression identifiers. Names that collide with words the
// language reserves, or that hold characters an identifier cannot, are escaped.

const RESERVED_WORDS = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function',
  'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);

const SPECIALS: Record<string, string> = { '__': '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };
const ESCAPES: Record<string, string> = Object.fromEntries(Object.entries(SPECIALS).map(([k, v]) => [v, k]));
const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The identifier for a property name, or undefined when the name cannot be expressed. */
export function escapeProperty(name: string): string | undefined {
  if (RESERVED_WORDS.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name.replace(/__|[.\-/]/g, (s) => SPECIALS[s]);
}

/** The property name an identifier stands for (the inverse of escapeProperty). */
export function unescapeProperty(ident: string): string {
  const word = /^__([a-z]+)__$/.exec(ident);
  if (word && RESERVED_WORDS.has(word[1])) return word[1];
  return ident.replace(/__underscores__|__dot__|__dash__|__slash__/g, (s) => ESCAPES[s]);
}
