import type { Context } from 'koa';
import { clientAddressHeader } from '../context.js';

/** The `/api/v1` paths of the content domain of a repository: `access.svc.content.<repository_name>/v1`. */
export const contentDomain = '/access.svc.content.:repository/v1';
export const adminDomain = '/access.svc.admin/v1';

/**
 * The headers an operation runs with for a plain HTTP call: the session from the spec's `sessionId`
 * query parameter or an Authorization header, and the request id and client address.
 */
export function sessionHeaders(ctx: Context): Headers {
  const headers = new Headers();
  const sessionId = ctx.query.sessionId;
  if (typeof sessionId === 'string' && sessionId !== '') headers.set('authorization', `Bearer ${sessionId}`);
  else if (ctx.get('authorization')) headers.set('authorization', ctx.get('authorization'));
  for (const name of ['x-request-id', clientAddressHeader]) {
    const value = ctx.req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}
