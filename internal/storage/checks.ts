// The argument checks and errors both backends share, so they answer alike.
import { RpcError, grpc } from '../rpc/index.js';
import { STORAGE_ERROR_KEY, type StorageErrorKind } from './client.js';

export const invalid = (message: string): RpcError => new RpcError(grpc.status.INVALID_ARGUMENT, message);
export const outOfRange = (kind: StorageErrorKind, message: string): RpcError =>
  new RpcError(grpc.status.OUT_OF_RANGE, message, { [STORAGE_ERROR_KEY]: kind });
export const unavailable = (): RpcError => new RpcError(grpc.status.UNAVAILABLE, 'the store is shutting down');
export const notFound = (key: string): RpcError => new RpcError(grpc.status.NOT_FOUND, `"${key}" not found`);

export function checkKey(key: string): void {
  if (!key) throw invalid('empty key');
  if (key.includes('\0')) throw invalid('key contains a NUL character');
}

export function checkRevision(revision: number, what = 'revision'): void {
  if (!Number.isSafeInteger(revision) || revision < 0) throw invalid(`invalid ${what} ${revision}`);
}

/** Refuses a revision past the store's newest. */
export function checkNotFuture(revision: number, newest: number): void {
  if (revision > newest) throw outOfRange('future', `revision ${revision} is newer than the store (${newest})`);
}

/** Checks a list's arguments. */
export function checkList(prefix: string, limit: number, continueAfter: string): void {
  if (!prefix.endsWith('/')) throw invalid(`prefix "${prefix}" does not end with "/"`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw invalid(`invalid limit ${limit}`);
  if (continueAfter && !continueAfter.startsWith(prefix)) throw invalid(`continue key "${continueAfter}" is not under "${prefix}"`);
}

/** Checks a watch's arguments. */
export function checkWatch(prefix: string, afterRevision: number): void {
  if (prefix && !prefix.endsWith('/')) throw invalid(`prefix "${prefix}" does not end with "/"`);
  checkRevision(afterRevision, 'after_revision');
}
