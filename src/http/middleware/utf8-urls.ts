import type { Middleware } from 'koa';
import { illegalArguments } from '../../errors.js';
import { percentDecodesAsUtf8 } from '../body.js';

/**
 * A path or query whose percent-escapes are not UTF-8 (`?name=%FF`) is a 400: the query parser and the
 * router put U+FFFD in their place, and a name, tag or id would have been stored or looked up with
 * characters the client never sent (JSON and form bodies are refused the same bytes: body.ts). Raw
 * bytes outside ASCII never get here: Node's parser refuses them.
 */
export function useUtf8Urls(): Middleware {
  return async (ctx, next) => {
    // no escape, nothing to decode (raw bytes outside ASCII never get here): most URLs
    if (ctx.url.includes('%') && (!percentDecodesAsUtf8(ctx.path) || !percentDecodesAsUtf8(ctx.querystring))) throw illegalArguments('the request URL is not valid UTF-8 once percent-decoded');
    await next();
  };
}
