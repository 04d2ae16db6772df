import { conflict, illegalArguments, isTransientConflict, ServiceError } from '../errors.js';

/**
 * Postgres refusals caused by the values a client sent (a NUL character, text it cannot encode, a
 * value too large for an index) are the client's mistake: 400s for both APIs, never 500s.
 */
const clientDataErrors: Record<string, string> = {
  '08P01': 'text must not contain NUL characters',
  '22P05': 'text must not contain NUL characters or characters the database cannot store',
  '22021': 'text must not contain NUL characters and must be valid UTF-8',
  '54000': 'a value is too large',
  '22001': 'a value is too long',
};

/** A full disk (or quota) under a store is a backing service that cannot take more: 503. */
const outOfSpaceCodes = new Set(['ENOSPC', 'EDQUOT']);

function codesOf(error: unknown): unknown[] {
  const e = error as { code?: string; sqlState?: string; cause?: { code?: string } };
  return [e?.code, e?.sqlState, e?.cause?.code];
}

/** The ServiceError a failure of the environment or of the client's data stands for, when known. */
export function knownFailure(error: unknown): ServiceError | undefined {
  const codes = codesOf(error);
  const state = codes.find((code): code is string => typeof code === 'string' && code in clientDataErrors);
  if (state) return illegalArguments(clientDataErrors[state]!);
  // a deadlock or serialisation failure outside the retried transactions: the client may try again
  if (isTransientConflict(error)) return conflict('the request collided with concurrent ones: try again');
  if (codes.some((code) => typeof code === 'string' && outOfSpaceCodes.has(code))) {
    return new ServiceError('unavailable', 'the storage is full: no space left for these bytes');
  }
  return undefined;
}
