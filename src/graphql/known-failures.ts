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

/**
 * A connection to a backing service lost or refused (Postgres restarted or ended the backend, too
 * many connections, a socket reset): nothing wrong with the request, it may succeed again: 503.
 * SQLSTATE class 08 (but 08P01, above) and the shutdown / connection-limit states, socket errors, and
 * node-postgres's own messages, which carry no code.
 */
const lostConnectionStates = new Set(['57P01', '57P02', '57P03', '53300']);
const lostConnectionCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const lostConnectionMessages = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

function lostConnection(error: unknown, codes: unknown[]): boolean {
  const strings = codes.filter((code): code is string => typeof code === 'string');
  if (strings.some((code) => lostConnectionStates.has(code) || lostConnectionCodes.has(code) || (code.startsWith('08') && code !== '08P01'))) return true;
  const e = error as { message?: unknown; cause?: { message?: unknown } };
  return [e?.message, e?.cause?.message].some((message) => typeof message === 'string' && lostConnectionMessages.test(message));
}

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
  if (lostConnection(error, codes)) {
    return new ServiceError('unavailable', 'the connection to the database (or another backing service) was lost: try again', undefined, 1);
  }
  return undefined;
}
