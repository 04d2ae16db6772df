import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import { clientAddressHeader } from '../../context.js';

export interface RequestState {
  requestId: string;
  log: Logger;
}

/** A request id a client may choose (anything else is replaced). */
export const requestIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every call a request id (the client's `x-request-id` when it is sane), a child logger carrying
 * it, and one structured access-log line. The caller's address comes from the socket, never from a
 * client's header — except behind the gateway (`behindGateway`: a subgraph process in split mode, not
 * reachable by clients), where the gateway's `x-client-address` is the caller's.
 */
export function useRequestId(logger: Logger, options: { behindGateway?: boolean } = {}): Middleware<RequestState> {
  return async (ctx, next) => {
    const offered = ctx.get('x-request-id');
    const requestId = requestIdPattern.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    // made when first used: most requests log only their access line, which needs no child logger
    // (a child per request was ≈ 1 % of a small read's time, docs/benchmarks.md)
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (log ??= logger.child({ requestId })), enumerable: true });
    ctx.req.headers['x-request-id'] = requestId;
    if (!options.behindGateway || !ctx.req.headers[clientAddressHeader]) {
      ctx.req.headers[clientAddressHeader] = ctx.req.socket.remoteAddress ?? 'unknown';
    }
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const duration = Math.round(performance.now() - started);
      logger.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, duration }, 'request');
    }
  };
}
