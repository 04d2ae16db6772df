import type { Middleware } from 'koa';

/** How long a request body may pause before its connection is closed. */
export const bodyIdleTimeoutMs = 60_000;

/**
 * A request whose body stops arriving is cut after `idleMs` without a byte (its upload is then
 * dropped as any cut upload is): the server has no request timeout (uploads of large files take
 * long), and a stalled body held its connection and its partial file forever. Only while the body
 * arrives: what the request then does (a long search, a deep check) is not timed here.
 */
export function useBodyIdleTimeout(idleMs = bodyIdleTimeoutMs): Middleware {
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.req.complete) {
      // no callback: the socket is destroyed on timeout
      ctx.req.setTimeout(idleMs);
      ctx.req.once('end', () => ctx.req.setTimeout(0));
    }
    await next();
  };
}
