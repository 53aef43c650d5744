// API errors as `Status` objects: every failed request answers one, with the
// HTTP code and the machine-readable reason clients branch on.

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  /** Left out of a delete's Success Status, as the platform's store writes it. */
  code?: number;
}

/** A request failure that the gateway answers as a Status object. */
export class StatusError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: StatusDetails,
    readonly headers: Record<string, string> = {}) {
    super(message);
  }

  toStatus(): Status {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      ...(this.message ? { message: this.message } : {}), ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: orderedDetails(this.details) } : {}), code: this.code,
    };
  }
}

/** Members in the order the platform writes them, empty ones left out (its fields are `omitempty`):
 * clients compare Status bodies byte for byte. */
function ordered<T extends object>(value: T, keys: (keyof T)[]): T {
  const out: Partial<T> = {};
  for (const k of keys) {
    const v = value[k];
    if (v !== undefined && v !== '' && v !== 0 && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  }
  return out as T;
}

const orderedCause = (c: StatusCause): StatusCause => ordered(c, ['reason', 'message', 'field']);

function orderedDetails(d: StatusDetails): StatusDetails {
  const out = ordered(d, ['name', 'group', 'kind', 'uid', 'causes', 'retryAfterSeconds']);
  if (out.causes) out.causes = out.causes.map(orderedCause);
  return out;
}

/** The group and resource an error is about, e.g. `configmaps` or `deployments.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}
const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);
const detailsOf = (gr: GroupResource, name: string, extra: StatusDetails = {}): StatusDetails =>
  ({ name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource, ...extra });

export const notFound = (gr: GroupResource, name: string) =>
  new StatusError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, detailsOf(gr, name));

export const alreadyExists = (gr: GroupResource, name: string) =>
  new StatusError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, detailsOf(gr, name));

export const conflict = (gr: GroupResource, name: string, why: string) =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, detailsOf(gr, name));

export const staleConflict = (gr: GroupResource, name: string) =>
  conflict(gr, name, 'the object has been modified; please apply your changes to the latest version and try again');

export const badRequest = (message: string) => new StatusError(400, 'BadRequest', message);

/** The causes as the platform's aggregate error words them: one alone, several (each once) in brackets. */
function causesText(causes: StatusCause[]): string {
  const texts = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

export const invalid = (kind: string, gr: GroupResource, name: string, causes: StatusCause[]) =>
  new StatusError(422, 'Invalid',
    `${kind}${gr.group ? `.${gr.group}` : ''} "${name}" is invalid${causes.length ? `: ${causesText(causes)}` : ''}`,
    { ...detailsOf(gr, name), kind, causes });

export const methodNotAllowed = (method: string, what: string) =>
  new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource: ${method} ${what}`);

export const notAcceptable = (accepted: string[]) =>
  new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);

export const unsupportedMediaType = (type: string, supported: string[]) =>
  new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`, { kind: type });

export const gone = (message: string) => new StatusError(410, 'Expired', message);

export const unauthorized = (message = 'Unauthorized') => new StatusError(401, 'Unauthorized', message);

export const forbidden = (message: string, gr?: GroupResource, name = '') =>
  new StatusError(403, 'Forbidden', message, gr ? detailsOf(gr, name) : undefined);

export const serviceUnavailable = (message: string) =>
  new StatusError(503, 'ServiceUnavailable', message, { retryAfterSeconds: 1 }, { 'Retry-After': '1' });

/** Over the server's concurrency limit: the client should retry after a second, as upstream's max-in-flight filter says. */
export const tooManyRequests = () =>
  new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 }, { 'Retry-After': '1' });

/** A request that outlived its deadline (`--request-timeout` or `?timeout=`). */
export const requestTimeout = () =>
  new StatusError(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout', {});

export const tooLargeResourceVersion = (requested: number, current: number) =>
  new StatusError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }, { 'Retry-After': '1' });

export const internalError = (message: string) =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

export const requestEntityTooLarge = (limit: number) =>
  new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

/** The Status of a successful delete that returns no object: the platform's store answers it without a code. */
export function success(gr: GroupResource, name: string, uid?: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: orderedDetails(detailsOf(gr, name, uid ? { uid } : {})) };
}
