import type { Middleware } from 'koa';

/**
 * A request line naming an HTTP version other than 1.x (`GET / HTTP/2.0`) is a 505 with the error
 * body (RFC 9110 §15.6.6): Node's parser reads such a line and the request was served as if it were
 * HTTP/1.1. HTTP/2 and 3 are not spoken in plain text on this port.
 */
export function useHttp1(): Middleware {
  return async (ctx, next) => {
    if (ctx.req.httpVersionMajor !== 1) {
      ctx.set('connection', 'close');
      ctx.throw(505, `HTTP/${ctx.req.httpVersion} is not supported: send HTTP/1.1 (or HTTP/1.0)`);
    }
    await next();
  };
}
