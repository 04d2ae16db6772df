import type { MiddlewareFn } from 'type-graphql';
import { illegalArguments, type ServiceError } from '../errors.js';

/**
 * Postgres refusals caused by the values a client sent (a NUL character, text it cannot encode, a
 * value too large for an index) are the client's mistake: 400s for both APIs, never 500s.
 */
const clientDataErrors: Record<string, string> = {
  '08P01': 'text must not contain NUL characters',
  '22P05': 'text must not contain NUL characters or characters the database cannot store',
  '22021': 'text is not valid UTF-8',
  '54000': 'a value is too large',
  '22001': 'a value is too long',
};

function sqlStateOf(error: unknown): string | undefined {
  const e = error as { code?: string; sqlState?: string; cause?: { code?: string } };
  return [e?.code, e?.sqlState, e?.cause?.code].find((code) => typeof code === 'string' && code in clientDataErrors);
}

/** The 400 a database error stands for, when the client's data caused it. */
export function clientDataError(error: unknown): ServiceError | undefined {
  const state = sqlStateOf(error);
  return state ? illegalArguments(clientDataErrors[state]!) : undefined;
}

/** For resolvers (both APIs run through them). */
export const mapDatabaseErrors: MiddlewareFn = async (_action, next) => {
  try {
    return await next();
  } catch (error) {
    throw clientDataError(error) ?? error;
  }
};
