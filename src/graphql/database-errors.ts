import type { MiddlewareFn } from 'type-graphql';
import { illegalArguments } from '../errors.js';

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

export const mapDatabaseErrors: MiddlewareFn = async (_action, next) => {
  try {
    return await next();
  } catch (error) {
    const state = sqlStateOf(error);
    if (state) throw illegalArguments(clientDataErrors[state]!);
    throw error;
  }
};
