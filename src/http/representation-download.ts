import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Services } from '../context.js';
import { ServiceError } from '../errors.js';
import { representationForDownload, thumbnailForDownload, type RepresentationRecord } from '../modules/conversion/index.js';
import { contentDisposition, notModified } from '../storage/range.js';
import { StoredFileUnavailableError } from '../storage/store.js';
import { bool, parse } from './query.js';
import { contentDomain } from './session.js';
import { scopeOfHttpRequest, setSandboxHeaders } from './transfer.js';

/** deactivated contents' representations too (their owner and administrators get them) */
export const representationQuery = z.object({ includeInactive: bool.optional() });

/** Sends a representation's bytes from the cache store. */
async function sendRepresentation(ctx: Context, services: Services, representation: RepresentationRecord, fileName: string) {
  const file = await services.cacheStore.open(representation.storagePath, representation.fileSize).catch((error: unknown) => {
    if (error instanceof StoredFileUnavailableError) throw new ServiceError('unavailable', `representation '${representation.id}' is not in the cache store as stored (${error.message})`);
    throw error;
  });
  try {
    ctx.type = representation.mimeType;
    ctx.length = representation.fileSize;
    ctx.set('content-disposition', contentDisposition(fileName, 'inline'));
    setSandboxHeaders(ctx, 'private');
    ctx.respond = false;
    ctx.res.writeHead(200);
    await file.send(ctx.res, 0, representation.fileSize - 1);
  } finally {
    await file.close();
  }
}

/**
 * GET C/representations/{id}/download: the bytes of a page image from the cache store (DESIGN §4).
 * GET C/content/{id}/thumbnail: the content's thumbnail (DESIGN §12), with an ETag (the thumbnail's id
 * and when it was made) with If-None-Match and If-Modified-Since, as the content's download.
 */
export function addRepresentationDownload(router: Router, services: Services): Router {
  router.get(`${contentDomain}/representations/:id/download`, async (ctx: Context) => {
    const scope = await scopeOfHttpRequest(ctx, services, ctx.params.repository!);
    const representation = await representationForDownload(scope, ctx.params.id!, { includeInactive: parse(representationQuery, ctx.query).includeInactive ?? false });
    await sendRepresentation(ctx, services, representation, `page-${representation.page}.${representation.format}`);
  });
  router.get(`${contentDomain}/content/:id/thumbnail`, async (ctx: Context) => {
    const scope = await scopeOfHttpRequest(ctx, services, ctx.params.repository!);
    const thumbnail = await thumbnailForDownload(scope, ctx.params.id!, { includeInactive: parse(representationQuery, ctx.query).includeInactive ?? false });
    const etag = `"${thumbnail.id}-${thumbnail.createdAt.getTime()}"`;
    ctx.set('etag', etag);
    ctx.set('last-modified', thumbnail.createdAt.toUTCString());
    if (notModified(ctx.get('if-none-match') || undefined, ctx.get('if-modified-since') || undefined, etag, thumbnail.createdAt)) {
      setSandboxHeaders(ctx, 'private');
      ctx.status = 304;
      return;
    }
    await sendRepresentation(ctx, services, thumbnail, 'thumbnail.png');
  });
  return router;
}
