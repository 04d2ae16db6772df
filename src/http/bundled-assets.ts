import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Context } from 'koa';

/**
 * Pages and scripts the service serves from its own files (the API reference page, the web console),
 * answered in the encoding the browser accepts (brotli, gzip) with the page's CSP, `nosniff` and the
 * cache policy of the asset. Each encoding is made once, at its first request: a service that nobody
 * browses (every test's) spends no start-up time compressing megabytes of script. It is made off the
 * event loop (zlib's thread pool): brotli at its best quality takes 3.4 s for Swagger UI's 1.7 MB
 * bundle, which would stall every other request.
 */
export class BundledAsset {
  readonly plain: Buffer;
  #gzipped?: Promise<Buffer>;
  #brotli?: Promise<Buffer>;

  constructor(
    readonly type: string,
    content: string | Buffer,
  ) {
    this.plain = Buffer.from(content);
  }

  get gzipped(): Promise<Buffer> {
    return (this.#gzipped ??= promisify(gzip)(this.plain, { level: 9 }));
  }

  get brotli(): Promise<Buffer> {
    return (this.#brotli ??= promisify(brotliCompress)(this.plain, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: this.plain.length },
    }));
  }
}

export async function sendBundledAsset(ctx: Context, asset: BundledAsset, headers: { csp: string; cacheControl: string }): Promise<void> {
  ctx.set('content-security-policy', headers.csp);
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('cache-control', headers.cacheControl);
  ctx.vary('accept-encoding');
  ctx.type = asset.type;
  // brotli whenever accepted: browsers list gzip first at the same weight, and brotli is the smaller
  const encoding = ctx.acceptsEncodings('br') === 'br' ? 'br' : ctx.acceptsEncodings('gzip', 'identity');
  if (encoding === 'br') {
    ctx.set('content-encoding', 'br');
    ctx.body = await asset.brotli;
  } else if (encoding === 'gzip') {
    ctx.set('content-encoding', 'gzip');
    ctx.body = await asset.gzipped;
  } else {
    ctx.body = asset.plain;
  }
}
