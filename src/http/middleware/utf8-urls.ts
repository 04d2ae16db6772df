import type { Middleware } from 'koa';
import { illegalArguments } from '../../errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether percent-decoding `text` gives UTF-8 (a `%` that starts no escape stays as it is, as the query
 * parser keeps it). Raw bytes outside ASCII never get here: Node's parser refuses them.
 */
const decodesAsUtf8 = (text: string) => {
  try {
    strictUtf8.decode(Buffer.from(text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1'));
    return true;
  } catch {
    return false;
  }
};

/**
 * A path or query whose percent-escapes are not UTF-8 (`?name=%FF`) is a 400: the query parser and the
 * router put U+FFFD in their place, and a name, tag or id would have been stored or looked up with
 * characters the client never sent (JSON bodies were refused the same bytes already).
 */
export function useUtf8Urls(): Middleware {
  return async (ctx, next) => {
    if (!decodesAsUtf8(ctx.path) || !decodesAsUtf8(ctx.querystring)) throw illegalArguments('the request URL is not valid UTF-8 once percent-decoded');
    await next();
  };
}
