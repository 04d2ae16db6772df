import type { Context } from 'koa';
import { bearerToken, clientAddressHeader } from '../context.js';
import { illegalArguments, notAuthenticated } from '../errors.js';

/** The `/api/v1` paths of the content domain of a repository: `access.svc.content.<repository_name>/v1`. */
export const contentDomain = '/access.svc.content.:repository/v1';
export const adminDomain = '/access.svc.admin/v1';

/** Printable ASCII: what a session id (and any value of an HTTP header) may hold. */
const sessionIdCharacters = /^[\x21-\x7e]+$/;

/**
 * The session of a plain HTTP call (REST and the transfer handlers), from one place only: the spec's
 * `sessionId` query parameter or an `Authorization` header. Both may be given only if they name the
 * same session; two different ones, or `sessionId` given twice, are a 400 (the call would otherwise
 * run as whichever one a rule happened to prefer). Answers the Authorization header value to run with.
 */
export function sessionAuthorization(ctx: Context): string | undefined {
  const sessionId = ctx.query.sessionId;
  if (Array.isArray(sessionId)) throw illegalArguments('sessionId must be given once');
  const header = ctx.get('authorization') || undefined;
  if (sessionId === undefined || sessionId === '') return header;
  // no session id has other characters (base64url); these could not even travel in a header (a 500)
  if (!sessionIdCharacters.test(sessionId)) throw notAuthenticated('unknown or expired session');
  if (header !== undefined && bearerToken(header) !== sessionId) {
    throw illegalArguments('the session is named twice (sessionId and Authorization) with different values: name it once');
  }
  return `Bearer ${sessionId}`;
}

/**
 * The headers an operation runs with for a plain HTTP call: the session (sessionAuthorization), the
 * request id and the client address.
 */
export function sessionHeaders(ctx: Context): Headers {
  const headers = new Headers();
  const authorization = sessionAuthorization(ctx);
  if (authorization !== undefined) headers.set('authorization', authorization);
  for (const name of ['x-request-id', clientAddressHeader]) {
    const value = ctx.req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}
