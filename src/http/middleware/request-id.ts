import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import { clientAddressHeader } from '../../context.js';

export interface RequestState {
  requestId: string;
  log: Logger;
}

/**
 * Gives every call a request id (the client's `x-request-id` when it is sane), a child logger carrying
 * it, and one structured access-log line. The caller's address comes from the socket, never a header.
 */
export function useRequestId(logger: Logger): Middleware<RequestState> {
  return async (ctx, next) => {
    const offered = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{1,128}$/.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.req.headers['x-request-id'] = requestId;
    ctx.req.headers[clientAddressHeader] = ctx.req.socket.remoteAddress ?? 'unknown';
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const duration = Math.round(performance.now() - started);
      ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, duration }, 'request');
    }
  };
}
