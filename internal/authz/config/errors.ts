// Field errors worded as upstream words them (`path: Required value`, ...), so a
// bad configuration file reads the same as it would upstream.
const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

export const required = (path: string, detail = ''): string => `${path}: Required value${detail ? `: ${detail}` : ''}`;
export const invalid = (path: string, value: unknown, detail: string): string => `${path}: Invalid value: ${show(value)}: ${detail}`;
export const notSupported = (path: string, value: unknown, supported: string[]): string =>
  `${path}: Unsupported value: ${show(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`;
export const duplicate = (path: string, value: unknown): string => `${path}: Duplicate value: ${show(value)}`;
export const tooMany = (path: string, count: number, max: number): string => `${path}: Too many: ${count}: must have at most ${max} items`;

/** A configuration that does not validate; every error is listed. */
export class AuthorizationConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('\n'));
  }
}
