import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { notFound } from '../../errors.js';
import type { AuthorizeOptions } from '../access/policy.js';
import { Entry, Resource } from '../entries/entry.entity.js';
import type { EntryScope } from '../entries/scope.js';
import { JobFailure, jobPriority, type JobHandler } from '../jobs/queue.js';
import { thumbnailJobName } from '../jobs/records.js';
import { partitionOf } from '../repositories/operations.js';
import { deletedSource, imageTypes, kindOf, removePageFiles, storeRepresentations } from './convert-job.js';
import type { PageRenderer } from './page-renderer.js';
import { readableSource, representationsOf, type RepresentationRecord } from './representations.js';

/**
 * Previews (DESIGN §12): a first-page thumbnail of every new PDF or image version, made in the
 * background by the render processes of conversions, and kept as a representation of the version in the
 * cache store (format `thumbnail`, page 1): counted in the cache statistics, removed with the content
 * and dropped by a check-in with new bytes, as page images are (docs/conversion.md, *Previews*).
 */
export { thumbnailJobName };
/** the representation format of a thumbnail */
export const thumbnailFormat = 'thumbnail';
/** the longest side of a thumbnail, in pixels */
export const thumbnailSide = 256;

/** Who a thumbnail job runs for: the service (its owner is the uploader, whose jobs take turns with others'). */
const thumbnailClient = '(service)';

/** A content version whose bytes want a thumbnail. */
interface PreviewSource {
  repositoryId: string;
  /** who the job is recorded for: the version's uploader */
  owner: string;
  contentId: string;
  resource: { id: string; name: string; mimeType: string };
}

const previewable = (mimeType: string) => mimeType === 'application/pdf' || imageTypes.has(mimeType);

async function submitThumbnail(services: Services, em: EntityManager, source: PreviewSource): Promise<void> {
  await services.jobs.submit(em, {
    repositoryId: source.repositoryId,
    jobName: thumbnailJobName,
    conversionType: 'THUMBNAIL',
    clientUsername: thumbnailClient,
    clientRoles: [],
    owner: source.owner,
    contentIds: [source.contentId],
    inputFilenames: [source.resource.name],
    priority: jobPriority.lowest,
    partition: partitionOf(source.repositoryId),
    serializedRequest: { resourceId: source.resource.id },
    requestTypeShortName: 'ThumbnailRequest',
  });
}

/**
 * Asks for the thumbnail of a content version's new bytes (a new content, its copy, a check-in with
 * new bytes, a replaced resource), without waiting: an upload never waits for its preview. PDFs and
 * images only, unless PREVIEWS_ENABLED is false. A submission that fails is logged; the workers' sweep
 * (`submitLostThumbnails`) asks again. `known`: the version's resource as the caller has it (else read).
 */
export function requestThumbnail(scope: EntryScope, content: Pick<Entry, 'id' | 'resourceId'>, known?: PreviewSource['resource']): void {
  const { services } = scope;
  if (!services.config.PREVIEWS_ENABLED || !content.resourceId) return;
  // the caller's row of the resource, when it has it, spares a query per upload (most are not previewable)
  if (known && !previewable(known.mimeType)) return;
  const submit = async () => {
    const em = services.orm.em.fork() as EntityManager;
    const resource = known ?? (await em.findOne(Resource, { id: content.resourceId! }));
    if (!resource || !previewable(resource.mimeType)) return;
    await submitThumbnail(services, em, { repositoryId: scope.repository.id, owner: scope.principal.userName, contentId: content.id, resource });
  };
  submit().catch((error: unknown) => scope.logger.warn({ err: error, contentId: content.id, reasonCode: 'thumbnailNotQueued' }, 'thumbnail not queued'));
}

/** How far back the sweep looks, and how long a version may wait for its request before it counts as lost. */
export const thumbnailSweepWindow = { withinMs: 60 * 60_000, lostAfterMs: 60_000 };

/**
 * Submits the thumbnail jobs whose request was lost (the process died between a version's commit and
 * its request, or the queue refused it): every current PDF or image version of the last hour
 * (`withinMs`) made more than `lostAfterMs` ago, with neither a thumbnail nor a thumbnail job. The
 * workers' sweep calls it every JOB_SWEEP_MS; its reads are bounded by the last hour's previewable
 * uploads (two partial indexes on creation times). Answers how many it submitted.
 */
export async function submitLostThumbnails(services: Services, window = thumbnailSweepWindow): Promise<number> {
  if (!services.config.PREVIEWS_ENABLED) return 0;
  const em = services.orm.em.fork() as EntityManager;
  const types = ['application/pdf', ...imageTypes];
  const lost = await em.execute<{ content_id: string; repository_id: string; created_by: string; resource_id: string; name: string; mime_type: string }[]>(
    `select e.id as content_id, e.repository_id, e.created_by, r.id as resource_id, r.name, r.mime_type
       from resource r
       join entry e on e.resource_id = r.id and e.entry_type = 'CONTENT' and e.is_latest and e.active
      where (r.mime_type = 'application/pdf' or r.mime_type like 'image/%') and r.mime_type in (${types.map(() => '?').join(', ')})
        and r.created_at > now() - ? * interval '1 millisecond' and e.last_modified_at < now() - ? * interval '1 millisecond'
        and not exists (select 1 from representation p where p.source_entry_id = e.id and p.format = ?)
        and r.id not in (select j.serialized_request ->> 'resourceId' from service_job j
                          where j.job_name = ? and j.created_at > now() - ? * interval '1 millisecond')
      limit 1000`,
    [...types, window.withinMs, window.lostAfterMs, thumbnailFormat, thumbnailJobName, window.withinMs + window.lostAfterMs],
  );
  for (const row of lost) {
    await submitThumbnail(services, em, {
      repositoryId: row.repository_id,
      owner: row.created_by,
      contentId: row.content_id,
      resource: { id: row.resource_id, name: row.name, mimeType: row.mime_type },
    });
  }
  if (lost.length > 0) services.logger.info({ submitted: lost.length }, 'thumbnails whose request was lost submitted');
  return lost.length;
}

/**
 * The `thumbnail` job: the first page of the version's bytes (PDF) or the image, rendered as PNG at
 * 72 dpi and scaled to fit `thumbnailSide`, by a bounded render process. A page that cannot be drawn,
 * an unreadable or encrypted file fail the job (`panic` with a reason code, logged by the queue) and
 * leave no thumbnail. A version whose bytes changed (a check-in) or that was deleted meanwhile is not
 * previewed: the new bytes have a job of their own.
 */
export function thumbnailJobHandler(services: Services, renderer: PageRenderer): JobHandler {
  return async (run) => {
    const { record, em } = run;
    const { resourceId } = record.serializedRequest as { resourceId: string };
    const current = async () => (await em.findOne(Entry, { id: record.contentIds[0]! }, { refresh: true }))?.resourceId === resourceId;
    const skipped = { result: { skipped: 'the content was deleted or has other bytes now' } };
    const content = await em.findOne(Entry, { id: record.contentIds[0]! });
    if (content?.resourceId !== resourceId) return skipped;
    const resource = await em.findOneOrFail(Resource, { id: resourceId });
    try {
      return await services.contentStore.withLocalFile(resource.storagePath, async (inputPath) => {
        const kind = await kindOf(inputPath, resource.mimeType, resource.name, 'a thumbnail');
        const outputDir = path.join(services.cacheStore.scratchDirectory(), `thumbnail-${record.id}-${record.tries}`);
        let size: { width: number; height: number } | undefined;
        try {
          await renderer.render(
            {
              inputPath,
              fileName: resource.name,
              kind,
              format: 'png',
              dpi: 72,
              maxPixels: services.config.CONV_MAX_IMAGE_PIXELS,
              maxPagePixels: renderer.maxPagePixels,
              outputDir,
              firstPageOnly: true,
              maxSide: thumbnailSide,
            },
            {
              inspected: async () => ({ type: 'render', placeholders: [], skip: [] }),
              page: async (page) => {
                if (page.placeholder) throw new JobFailure('illegalArguments', `the first page of ${resource.name} could not be rendered`);
                // new bytes checked in meanwhile: this preview would show the old ones
                if (!(await current())) return;
                await storeRepresentations(run, services, content, { format: thumbnailFormat, mimeType: 'image/png' }, [page], 1);
                size = { width: page.width, height: page.height };
              },
            },
            run.signal,
          );
        } finally {
          await rm(outputDir, { recursive: true, force: true });
        }
        return size ? { result: size } : skipped;
      });
    } catch (error) {
      // deleted meanwhile: a thumbnail file placed before its row failed to insert goes too
      if (!(await deletedSource(em, record.contentIds))) throw error;
      await removePageFiles(services, content.id, thumbnailFormat, 1);
      return skipped;
    }
  };
}

/** GET C/content/{id}/thumbnail: the content's thumbnail, under the rules of its download; 404 until it is made, and for kinds that have none. */
export async function thumbnailForDownload(scope: EntryScope, contentId: string, options: AuthorizeOptions = {}): Promise<RepresentationRecord> {
  const content = await readableSource(scope, contentId, options);
  const [thumbnail] = await representationsOf(scope.em, content.id, thumbnailFormat);
  if (!thumbnail) throw notFound(`content '${contentId}' has no thumbnail (none is made for its kind, or it is not ready yet)`);
  return thumbnail;
}

/** Which of these contents have their thumbnail made (Content.thumbnailUrl, batched per request): one query for a page of them. */
export async function thumbnailsOf(em: EntityManager, contentIds: readonly string[]): Promise<string[]> {
  const rows = await em.execute<{ source_entry_id: string }[]>(
    `select source_entry_id from representation where format = ? and source_entry_id in (${contentIds.map(() => '?').join(', ')})`,
    [thumbnailFormat, ...contentIds],
  );
  return rows.map((row) => row.source_entry_id);
}
