import type { Middleware } from 'koa';

/**
 * A 401 names the scheme that would do (RFC 9110 §11.6.1 asks it of every 401): the session id as a
 * Bearer token (the REST layer also takes it as the `sessionId` parameter). /graphql sets its own.
 */
export function useAuthenticationChallenge(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status === 401 && !ctx.response.get('www-authenticate')) ctx.set('WWW-Authenticate', 'Bearer');
  };
}
