import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { createRequestContext, type RequestContext, type Services } from '../context.js';
import { ServiceError } from '../errors.js';
import { contentForDownload } from '../modules/entries/index.js';
import { entryScope } from '../modules/entries/index.js';
import type { EntryScope, ReceivedBytes, StageOptions, StagedUpload, UploadInput } from '../modules/entries/index.js';
import { discardReceived, discardUpload, receiveUpload, refuseDeclaredMultipartLength, stageUpload } from '../modules/entries/index.js';
import { contentDisposition, contentRange, notModified, parseRange, preconditionFailed } from '../storage/range.js';
import { StoredFileUnavailableError } from '../storage/store.js';
import type { RequestState } from './middleware/request-id.js';
import { readMultipart, singleField } from './multipart.js';
import { bool, parse } from './query.js';
import { contentDomain, sessionHeaders } from './session.js';

const requestContexts = new WeakMap<Context, RequestContext>();

/**
 * The request context of a plain HTTP call, made once per call: the REST layer's check of the caller
 * and its upload share one unit of work and one resolution of the session.
 */
export function requestContextOf(ctx: Context, services: Services): RequestContext {
  let context = requestContexts.get(ctx);
  if (!context) requestContexts.set(ctx, (context = createRequestContext(services, sessionHeaders(ctx))));
  return context;
}

/** The caller's scope for a plain HTTP handler (same session rules as GraphQL and REST). */
export async function scopeOfHttpRequest(ctx: Context, services: Services, repository: string): Promise<EntryScope> {
  return entryScope(requestContextOf(ctx, services), repository);
}

/**
 * The type a raw upload declares; none (sniffed) for the two that say nothing about the file:
 * `application/octet-stream`, and the form type curl's `--data-binary` sends unless told otherwise.
 */
const rawBodyType = (type: string) => (type && type !== 'application/octet-stream' && type !== 'application/x-www-form-urlencoded' ? type : undefined);

const declaredLength = (ctx: Context) => (ctx.request.length === undefined ? undefined : Number(ctx.request.length));

/** What becomes of an upload's bytes: staged as a pending upload (`stagingUploads`) or held for a verb (`holdingUploads`). */
export interface UploadReceiver<T> {
  receive(input: UploadInput): Promise<T>;
  discard(received: T): Promise<void>;
}

/** Bytes recorded as a pending upload of the caller, for a later claim by id (a GraphQL document's). */
export const stagingUploads = (scope: EntryScope, options: StageOptions = {}): UploadReceiver<StagedUpload> => ({
  receive: (input) => stageUpload(scope, input, options),
  discard: (upload) => discardUpload(scope, upload.id),
});

/** Bytes held (neither placed nor recorded) for a verb that writes them with its version's row. */
export const holdingUploads = (scope: EntryScope): UploadReceiver<ReceivedBytes> => ({
  receive: (input) => receiveUpload(scope, input),
  discard: discardReceived,
});

/**
 * Receives the bytes of a multipart request's `file` part through `receiver`; the text fields come
 * back with it. `requireFile` false: a request without a file part (check-in without new bytes).
 */
export async function receiveMultipartUpload<T>(ctx: Context, scope: EntryScope, requireFile: boolean, receiver: UploadReceiver<T>) {
  try {
    refuseDeclaredMultipartLength(scope.services.config, declaredLength(ctx));
  } catch (error) {
    // the body is not read: the connection closes after the answer
    ctx.set('connection', 'close');
    throw error;
  }
  const { fields, file } = await readMultipart(ctx, {
    receive: (stream, info, fieldsSoFar) =>
      receiver.receive({
        source: stream,
        // the resource keeps the file's name; the content's name may differ (the `name` field)
        fileName: info.fileName || singleField(fieldsSoFar, 'name') || 'upload',
      }),
    discard: (received) => receiver.discard(received),
  });
  if (!file && requireFile) {
    const hint = fields.file ? ": the part named 'file' came as a text field (give it a filename, as `curl -F file=@path` does)" : '';
    throw new ServiceError('illegalArguments', `file: a file part named 'file' is required${hint}`);
  }
  return { fields, upload: file };
}

/** Types a browser may show in place (`inline=true`): no scripts, no markup. SVG is an image that runs scripts. */
const INLINE_SAFE = /^(image\/(?!svg\+xml$)[a-z0-9.+-]+|application\/pdf|text\/plain)$/;

/** A download's parameters: deactivated contents too (their owner and administrators get them), shown in place. */
export const downloadQuery = z.object({ includeInactive: bool.optional(), inline: bool.optional() });

/**
 * Headers that keep stored bytes from acting as a page of this origin, whatever they hold (HTML,
 * SVG, XML, or bytes whose sniffed type differs from the stated one): no type sniffing, a sandbox
 * without scripts or subresources, no shared caches. Everything is an attachment; `inline=true`
 * shows the safe types in place.
 */
function setProtectiveHeaders(ctx: Context, mimeType: string, fileName: string, inlineAsked: boolean): void {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase();
  const inline = inlineAsked && INLINE_SAFE.test(essence);
  // no-cache: the bytes behind the URL change with a new version
  setSandboxHeaders(ctx, 'private, no-cache');
  ctx.set('content-disposition', contentDisposition(fileName, inline ? 'inline' : 'attachment'));
}

/** What every download of stored bytes carries (DESIGN §9): no sniffing, a sandbox, no shared caches (`private`). */
export function setSandboxHeaders(ctx: Context, cacheControl: string): void {
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('content-security-policy', "default-src 'none'; sandbox");
  ctx.set('cache-control', cacheControl);
}

/**
 * Binary transfer over plain HTTP, shared by both APIs: uploads for GraphQL clients (the returned id
 * goes into a mutation) and downloads with Range, ETag and Content-Disposition.
 */
export function transferRouter(services: Services): Router {
  const router = new Router({ prefix: `${services.config.BASE_PATH}/api/v1` });

  router.post(`${contentDomain}/uploads`, async (ctx) => {
    const scope = await scopeOfHttpRequest(ctx, services, ctx.params.repository!);
    const resource = ctx.request.is('multipart/form-data')
      ? (await receiveMultipartUpload(ctx, scope, true, stagingUploads(scope))).upload!
      : await stageUpload(scope, {
          source: ctx.req,
          fileName: typeof ctx.query.fileName === 'string' ? ctx.query.fileName : 'upload',
          mimeType: rawBodyType(ctx.request.type),
          declaredLength: declaredLength(ctx),
        });
    ctx.status = 201;
    ctx.body = {
      uploadId: resource.id,
      name: resource.name,
      mimeType: resource.mimeType,
      fileSize: resource.fileSize,
      md5: resource.md5,
    };
  });

  const download = async (ctx: Context) => {
    const scope = await scopeOfHttpRequest(ctx, services, ctx.params.repository!);
    const query = parse(downloadQuery, ctx.query);
    const { content, resource } = await contentForDownload(scope, ctx.params.id!, { includeInactive: query.includeInactive ?? false });
    const file = await services.contentStore.open(resource.storagePath, resource.fileSize).catch((error: unknown) => {
      if (error instanceof StoredFileUnavailableError) {
        throw new ServiceError('unavailable', `the bytes of content '${content.id}' are not in the content store as stored (${error.message})`);
      }
      throw error;
    });
    try {
      const etag = `"${resource.md5}"`;
      ctx.set('etag', etag);
      ctx.set('accept-ranges', 'bytes');
      ctx.set('last-modified', resource.createdAt.toUTCString());
      // the name the content has now (a rename renames its download), not the name its file was uploaded with
      setProtectiveHeaders(ctx, resource.mimeType, content.name, query.inline ?? false);
      ctx.type = resource.mimeType;
      if (preconditionFailed(ctx.get('if-match') || undefined, ctx.get('if-unmodified-since') || undefined, etag, resource.createdAt)) {
        throw new ServiceError('preconditionFailed', `content '${content.id}' is not the version the request's If-Match or If-Unmodified-Since asks for (its ETag is ${etag})`);
      }
      if (notModified(ctx.get('if-none-match') || undefined, ctx.get('if-modified-since') || undefined, etag, resource.createdAt)) {
        ctx.status = 304;
        return;
      }
      const size = resource.fileSize;
      const ifRange = ctx.get('if-range');
      const range = !ifRange || ifRange === etag ? parseRange(ctx.get('range') || undefined, size) : undefined;
      if (range === 'unsatisfiable') {
        ctx.set('content-range', contentRange(range, size));
        throw new ServiceError('rangeNotSatisfiable', `range '${ctx.get('range')}' is outside the ${size} bytes of the content`);
      }
      ctx.status = range ? 206 : 200;
      if (range) ctx.set('content-range', contentRange(range, size));
      ctx.length = range ? range.end - range.start + 1 : size;
      if (ctx.method === 'HEAD') return;
      // Koa set the headers on the response; it does not respond itself
      ctx.respond = false;
      ctx.res.writeHead(ctx.status);
      const sent = await file.send(ctx.res, range?.start ?? 0, range ? range.end : size - 1);
      if (!sent.complete) {
        (ctx.state as RequestState).log.debug({ reason: 'clientGone', sentBytes: sent.bytes, content: content.id }, 'the client hung up during the download');
      }
    } finally {
      await file.close();
    }
  };
  router.get(`${contentDomain}/content/:id/download`, download);
  router.head(`${contentDomain}/content/:id/download`, download);
  return router;
}
