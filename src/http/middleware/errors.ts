import type { Context, Middleware } from 'koa';
import { errorBody, isClientStatus, reasonOfStatus, ServiceError } from '../../errors.js';
import { knownFailure } from '../../graphql/known-failures.js';
import type { RequestState } from './request-id.js';

/** The client closed its connection before its request arrived whole. */
const clientHungUp = (ctx: Context) => ctx.req.destroyed && !ctx.req.complete;

/** Every failure becomes the error body of DESIGN §3 with its status; a 500 never carries a stack. */
export function useErrorBody(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      // no route answered
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404; // Koa would turn it into 200 when the body is set
        ctx.body = errorBody(404, 'notFound', `no such path: ${ctx.method} ${ctx.path}`);
      }
    } catch (thrown) {
      if (clientHungUp(ctx)) {
        // nobody is left to answer, and nothing is wrong with the service: no stack, not an error
        ctx.state.log.debug({ reason: 'clientGone', method: ctx.method, path: ctx.path, detail: (thrown as Error)?.message }, 'the client hung up');
        ctx.status = 400; // for the access log: the request was cut short
        ctx.res.destroy();
        return;
      }
      if (ctx.headerSent) {
        // too late for an error body (a download or stream failed halfway): end the connection, so
        // the client sees the transfer fail instead of waiting for bytes that never come
        ctx.state.log.error({ err: thrown }, 'failed after the response started');
        ctx.res.destroy();
        return;
      }
      // plain HTTP handlers (transfer) meet the database and the disks without the resolvers' mapping
      const error = knownFailure(thrown) ?? thrown;
      if (error instanceof ServiceError) {
        ctx.status = error.status;
        if (error.retryAfter) ctx.set('Retry-After', String(error.retryAfter));
        ctx.body = errorBody(error.status, error.reasonCode, error.message, error.details);
        return;
      }
      const status = (error as { status?: number; expose?: boolean }).status;
      if (status && isClientStatus(status)) {
        ctx.status = status;
        ctx.body = errorBody(status, reasonOfStatus(status), (error as Error).message);
        return;
      }
      ctx.state.log.error({ err: error }, 'unhandled error');
      ctx.status = 500;
      ctx.body = errorBody(500, 'internal', `internal error (request id ${ctx.state.requestId})`);
    }
  };
}
