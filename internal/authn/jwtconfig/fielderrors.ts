// Validation errors named by field path and worded as the upstream server
// words them (`jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https`),
// so operators can search for them.

export type ErrorType = 'Required value' | 'Invalid value' | 'Duplicate value' | 'Forbidden' | 'Too many' | 'Unsupported value';

export class FieldError {
  constructor(readonly path: string, readonly type: ErrorType, readonly value: unknown, readonly detail = '') {}

  toString(): string {
    let body: string = this.type;
    if (this.type === 'Too many') body = `Too many: ${String(this.value)}`;
    else if (this.type !== 'Required value' && this.type !== 'Forbidden') body = `${this.type}: ${JSON.stringify(this.value)}`;
    return `${this.path}: ${body}${this.detail ? `: ${this.detail}` : ''}`;
  }
}

export const required = (path: string, detail = '') => new FieldError(path, 'Required value', undefined, detail);
export const invalid = (path: string, value: unknown, detail: string) => new FieldError(path, 'Invalid value', value, detail);
export const duplicate = (path: string, value: unknown) => new FieldError(path, 'Duplicate value', value);
export const forbidden = (path: string, detail: string) => new FieldError(path, 'Forbidden', undefined, detail);
export const tooMany = (path: string, count: number, limit: number) =>
  new FieldError(path, 'Too many', count, `must have at most ${limit} items`);

/** One message for all errors: the error alone, or `[a, b, ...]`. */
export const aggregate = (errors: FieldError[]): string =>
  (errors.length === 1 ? errors[0].toString() : `[${errors.map(String).join(', ')}]`);
