import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Services } from '../context.js';
import { ServiceError } from '../errors.js';
import { representationForDownload } from '../modules/conversion/index.js';
import { contentDisposition } from '../storage/range.js';
import { StoredFileUnavailableError } from '../storage/store.js';
import { bool, parse } from './query.js';
import { contentDomain } from './session.js';
import { scopeOfHttpRequest, setSandboxHeaders } from './transfer.js';

/** deactivated contents' representations too (their owner and administrators get them) */
export const representationQuery = z.object({ includeInactive: bool.optional() });

/** GET C/representations/{id}/download: the bytes of a page image from the cache store (DESIGN §4). */
export function addRepresentationDownload(router: Router, services: Services): Router {
  router.get(`${contentDomain}/representations/:id/download`, async (ctx: Context) => {
    const scope = await scopeOfHttpRequest(ctx, services, ctx.params.repository!);
    const representation = await representationForDownload(scope, ctx.params.id!, { includeInactive: parse(representationQuery, ctx.query).includeInactive ?? false });
    const file = await services.cacheStore.open(representation.storagePath, representation.fileSize).catch((error: unknown) => {
      if (error instanceof StoredFileUnavailableError) throw new ServiceError('unavailable', `representation '${representation.id}' is not in the cache store as stored (${error.message})`);
      throw error;
    });
    try {
      ctx.type = representation.mimeType;
      ctx.length = representation.fileSize;
      ctx.set('content-disposition', contentDisposition(`page-${representation.page}.${representation.format}`, 'inline'));
      setSandboxHeaders(ctx, 'private');
      ctx.respond = false;
      ctx.res.writeHead(200);
      await file.send(ctx.res, 0, representation.fileSize - 1);
    } finally {
      await file.close();
    }
  });
  return router;
}
