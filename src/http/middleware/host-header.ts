import type { Middleware } from 'koa';
import { illegalArguments } from '../../errors.js';

/**
 * An HTTP/1.1 request without `Host` is a 400 with the service's error body (RFC 9112 §3.2). Node's
 * own check answers an empty 400, so the server leaves it to this (`requireHostHeader: false`).
 */
export function useHostHeader(): Middleware {
  return async (ctx, next) => {
    const { httpVersionMajor, httpVersionMinor, headers } = ctx.req;
    if (httpVersionMajor === 1 && httpVersionMinor >= 1 && headers.host === undefined) {
      ctx.set('connection', 'close');
      throw illegalArguments('an HTTP/1.1 request needs a Host header');
    }
    await next();
  };
}
