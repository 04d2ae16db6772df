import type { Middleware } from 'koa';
import { ServiceError } from '../../errors.js';

/**
 * Request bodies are taken unencoded. A `Content-Encoding` other than `identity` is a 415 that says
 * so, with `Accept-Encoding: identity` (RFC 9110 §15.5.16): before, the encoded bytes were read as
 * they came (a gzip'd JSON body was a 400 about UTF-8, a gzip'd upload was stored compressed). A
 * transfer coding other than `chunked` is a 501 (RFC 9112 §6.1).
 */
export function useUnencodedBodies(): Middleware {
  return async (ctx, next) => {
    const encoding = ctx.get('content-encoding').trim().toLowerCase();
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && encoding !== '' && encoding !== 'identity') {
      ctx.set('accept-encoding', 'identity');
      // the body is not read: the connection ends with the answer
      ctx.set('connection', 'close');
      throw new ServiceError('unsupportedMediaType', `Content-Encoding '${encoding.slice(0, 64)}' is not accepted: send the request body unencoded`);
    }
    // Node's parser takes `chunked` as the last coding and reads the body as if the others were not there
    const transfer = ctx.get('transfer-encoding').trim().toLowerCase();
    if (transfer !== '' && transfer !== 'chunked') {
      ctx.set('connection', 'close');
      ctx.throw(501, `Transfer-Encoding '${transfer.slice(0, 64)}' is not supported: send the body chunked or with a Content-Length`);
    }
    await next();
  };
}
