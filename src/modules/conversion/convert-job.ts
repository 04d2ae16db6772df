import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { missingRows } from '../../db/missing-rows.js';
import { conflict, isUniqueViolation } from '../../errors.js';
import { authorize } from '../access/policy.js';
import { nameClash, nameTaken } from '../entries/chronicles.js';
import { createContent } from '../entries/contents.js';
import { Entry, Resource } from '../entries/entry.entity.js';
import { readContentWithResource } from '../entries/read.js';
import type { EntryScope } from '../entries/scope.js';
import { jobScope } from '../entries/scope-of-job.js';
import { discardUpload, stageUpload } from '../entries/uploads.js';
import { JobFailure, jobPriority, type JobHandler, type JobOutcome, type JobRun } from '../jobs/queue.js';
import { saveJobResult, saveLowlevelRequest } from '../jobs/records.js';
import { checkInputFiles, checkPdfPageCount, decidePdf, type PdfDecision } from './limits.js';
import { mimeTypeOf, resultName, parseSpecification, type ResultAction, type TargetFormat } from './operations.js';
import { PageBatch } from './page-batch.js';
import type { InputKind, PageRenderer, RenderedPage } from './page-renderer.js';
import { representationId, representationStatement, representationsOf, type RepresentationRecord } from './representations.js';

export const imageTypes = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/tiff', 'image/gif']);

/**
 * PDF or image, by the declared type and the first bytes (a PDF uploaded as octet-stream is still a PDF).
 * A declared PDF is one whatever its bytes: the file is not opened for it (one open and read less a job).
 */
export async function kindOf(file: string, mimeType: string, name: string, into = 'an image'): Promise<InputKind> {
  if (mimeType === 'application/pdf') return 'pdf';
  const handle = await open(file, 'r');
  const head = Buffer.alloc(1024);
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (head.includes('%PDF-')) return 'pdf';
  if (imageTypes.has(mimeType)) return 'image';
  throw new JobFailure('unsupportedMediaType', `input resource ${name} (${mimeType}) cannot be converted to ${into}: PDF, PNG, JPEG, WebP, TIFF and GIF can`);
}

/** The job's request (serializedRequest). */
interface ConversionRequest {
  targetFormat: TargetFormat;
  resultAction: ResultAction;
  newContentSpecification: Record<string, unknown> | null;
}

/** What the job produced, kept in the job record (`serializedResult`) page by page so that a retry goes on from there. */
interface ConversionResult {
  pages: number;
  placeholders: number[];
  representationIds?: string[];
  contentIds?: Record<string, string>;
  /** NEW_CONTENT: the page whose content is being created (recorded first, so that a retry knows it may exist) */
  creatingPage?: number;
  reused?: boolean;
}

/**
 * The pages stored before (by an earlier conversion, or this job's previous try) that need no new
 * render: real renders of a document of this page count that the current limits leave rendered.
 * Placeholders are drawn again: under the current limits their page may render for real, or their
 * text name other limits.
 */
function reusablePages(stored: RepresentationRecord[], pages: number, placeholders: number[]): number[] {
  return stored.filter((r) => r.status === 'READY' && r.pageCount === pages && !placeholders.includes(r.page)).map((r) => r.page);
}

/**
 * Places page images (or a thumbnail) in the cache store and records them as the representations of
 * those pages of the source version — both while the job runs (a cancelled job's pages are not placed)
 * — with the job's `percentage` after them, when given, in one transaction.
 */
export async function storeRepresentations(
  run: JobRun,
  services: Services,
  source: Pick<Entry, 'id' | 'repositoryId'>,
  { format, mimeType }: { format: string; mimeType: string },
  pages: RenderedPage[],
  pageCount: number,
  percentage?: number,
) {
  // the render process fsynced the pages (a representation keeps no md5): placed as they are, not copied
  const staged = await Promise.all(pages.map((page) => services.cacheStore.stageSyncedFile(page.path)));
  const rows = pages.map((page, index) => {
    const id = representationId(source.id, format, page.page);
    return {
      id,
      repositoryId: source.repositoryId,
      sourceEntryId: source.id,
      format,
      page: page.page,
      pageCount,
      status: page.placeholder ? 'PLACEHOLDER' : 'READY',
      mimeType,
      fileSize: staged[index]!.size,
      width: page.width,
      height: page.height,
      storagePath: services.cacheStore.pathFor(id),
      jobId: run.record.id,
    };
  });
  try {
    await run.storeRows(
      async () => {
        // every placement ends before the transaction does (a failed one rolls it back): none lands after that
        const placed = await Promise.allSettled(staged.map((file, index) => file.commit(rows[index]!.storagePath)));
        const failed = placed.find((outcome) => outcome.status === 'rejected');
        if (failed) throw failed.reason;
      },
      [representationStatement(rows)],
      percentage,
    );
  } finally {
    await Promise.all(staged.map((file) => file.discard()));
  }
}

/**
 * A new content made by a job (a page, a merged PDF), created while the job runs (a cancelled job
 * creates none). Idempotent across tries: when `retried` (this job's previous try was creating it when
 * its worker died), a content of that name in the folder with the same bytes is that try's and is taken
 * as the result, not created again. Any other content of that name is a conflict, as for every name
 * clash (another job's output included).
 */
export async function createResultContent(
  run: JobRun,
  scope: EntryScope,
  file: { path: string; mimeType: string },
  name: string,
  specification: ReturnType<typeof parseSpecification>,
  retried: boolean,
): Promise<string> {
  const upload = await stageUpload(scope, { source: createReadStream(file.path), fileName: name, mimeType: file.mimeType });
  const existing = async () => {
    const entry = await scope.em.findOne(Entry, {
      repositoryId: scope.repository.id,
      parentId: specification.parentId ?? null,
      name,
      active: true,
      isLatest: true,
      entryType: 'CONTENT',
    });
    const resource = entry?.resourceId ? await scope.em.findOne(Resource, { id: entry.resourceId }) : null;
    return entry && resource?.md5 === upload.md5 ? entry.id : undefined;
  };
  try {
    const created = await run.whileRunning((em) =>
      createContent(
        { ...scope, em },
        { uploadId: upload.id, name, parentId: specification.parentId, typeName: specification.typeName, tags: specification.tags, properties: specification.properties },
      ),
    );
    return created.id;
  } catch (error) {
    const same = retried && ((error as { reasonCode?: string }).reasonCode === 'conflict' || isUniqueViolation(error)) ? await existing() : undefined;
    // the page's bytes were staged for a content that was not made (or was made by the earlier try)
    await discardUpload(scope, upload.id);
    if (same) return same;
    throw error;
  }
}

/**
 * NEW_CONTENT: every page's name is free in the folder before any page is rendered, so that a clash
 * does not leave the pages before it behind. Pages this job created (or was creating) on a previous
 * try are its own. A content of such a name created while the job runs still fails that page.
 */
async function checkNewContentNames(
  scope: EntryScope,
  specification: ReturnType<typeof parseSpecification>,
  sourceName: string,
  format: TargetFormat,
  pages: number,
  created: Record<string, string>,
  creatingPage: number | undefined,
) {
  for (let page = 1; page <= pages; page++) {
    if (created[page] || page === creatingPage) continue;
    const name = resultName(specification.name, sourceName, format, { page, pages });
    if (await nameTaken(scope, specification.parentId ?? null, name)) throw conflict(nameClash(name));
  }
}

/**
 * The `convert` job (POST C/convert/image): limits first (files, then the PDF's pages and painting
 * operations with the repository's strategy), then rendering by `renderer` (outside the service's
 * process), then the results — representations in the cache store, or new contents — each page as it comes.
 */
export function convertJobHandler(services: Services, renderer: PageRenderer): JobHandler {
  return async (run): Promise<JobOutcome> => {
    const { record, em } = run;
    const request = record.serializedRequest as unknown as ConversionRequest;
    const previousTry: Partial<ConversionResult> = (record.serializedResult as ConversionResult | null) ?? {};
    const result: ConversionResult = { pages: 0, placeholders: [], ...previousTry, creatingPage: undefined };
    try {
      return await convert(run, services, renderer, request, previousTry, result);
    } catch (error) {
      // purged (or its folder deleted) after the job was submitted: whatever failed then (its bytes, a page's row), that is the reason
      const deleted = await deletedSource(em, record.contentIds);
      if (!deleted) throw error;
      if (request.resultAction === 'CONTENT_REPRESENTATION') await removePageFiles(services, deleted, request.targetFormat, result.pages);
      throw new JobFailure('notFound', `content '${deleted}' was deleted during the conversion`);
    }
  };
}

/** The first of the job's sources that no longer exists. */
export async function deletedSource(em: EntityManager, contentIds: string[]): Promise<string | undefined> {
  const missing = await missingRows(em, 'entry', contentIds);
  return contentIds.find((id) => missing.has(id));
}

/**
 * The page files a job stored for a source that was deleted meanwhile: the deletion took the rows it
 * found, but a page stored after that has no row (its insert failed) and its file would stay in the
 * cache store. The paths derive from (source, format, page).
 */
export async function removePageFiles(services: Services, sourceId: string, format: string, pages: number) {
  for (let page = 1; page <= pages; page++) await services.cacheStore.remove(services.cacheStore.pathFor(representationId(sourceId, format, page)));
}

/** The job's work; `result` is filled as it goes (the handler reads its page count when the job fails). */
async function convert(
  run: JobRun,
  services: Services,
  renderer: PageRenderer,
  request: ConversionRequest,
  previousTry: Partial<ConversionResult>,
  result: ConversionResult,
): Promise<JobOutcome> {
  const { record, em } = run;
  const scope = await jobScope(run, services);
  const format = request.targetFormat;
  const inputs = await Promise.all(record.contentIds.map((id) => readContentWithResource(scope, id)));
  const sources = inputs.map(({ content }) => content);
  // deactivated, or its ACL changed, since the job was started: not converted (the rules of startImageConversion)
  for (const source of sources) await authorize(scope, request.resultAction === 'NEW_CONTENT' ? 'download' : 'convert', { entry: source });
  const resources = inputs.map(({ resource }) => resource);
  const limits = scope.repository.limits ?? {};
  checkInputFiles(
    resources.map((resource, index) => ({ name: resource?.name ?? record.inputFilenames[index] ?? sources[index]!.name, size: resource?.fileSize ?? 0 })),
    limits,
    services.config,
  );
  // image conversion takes one input; several (MERGE) come with their own job
  const source = sources[0]!;
  const resource = resources[0]!;
  const stored = request.resultAction === 'CONTENT_REPRESENTATION' ? await representationsOf(em, source.id, format) : [];
  // the renderer reads a local file: the stored bytes, or a scratch copy of them (S3)
  return services.contentStore.withLocalFile(resource.storagePath, async (inputPath) => {
    const kind = await kindOf(inputPath, resource.mimeType, resource.name);
    const specification = parseSpecification(request.newContentSpecification);
    const lowered = (record.serializedLowlevelRequest as { lowered?: boolean } | null)?.lowered === true;
    const outputDir = path.join(services.cacheStore.scratchDirectory(), `render-${record.id}-${record.tries}`);
    const { CONV_PDF_DPI: dpi, CONV_MAX_IMAGE_PIXELS: maxPixels } = services.config;
    const pagePixels = renderer.maxPagePixels;
    // the engine's request as a client may read it (the spec's serializedLowlevelRequest): no storage paths
    await saveLowlevelRequest(em, record.id, {
      engine: kind === 'pdf' ? 'pdfjs-dist' : 'sharp',
      inputResourceId: resource.id,
      inputMimeType: resource.mimeType,
      inputKind: kind,
      targetFormat: format,
      dpi,
      maxPixels,
      maxPagePixels: pagePixels,
    });
    let requeue: JobOutcome | undefined;
    const pageBatch = new PageBatch(services.config.CONV_PAGE_COMMIT_MS, (pages, percentage) =>
      storeRepresentations(run, services, source, { format, mimeType: mimeTypeOf(format) }, pages, result.pages, percentage),
    );
    try {
      await renderer.render(
        { inputPath, fileName: resource.name, kind, format, dpi, maxPixels, maxPagePixels: pagePixels, outputDir },
        {
          opened: async (pages) => checkPdfPageCount(resource.name, pages, services.config),
          inspected: async (pages, objects) => {
            result.pages = pages;
            // the limits are checked on every conversion, also when every page is stored already
            const decision: PdfDecision = kind === 'pdf' ? decidePdf({ file: resource.name, objects }, limits, services.config, lowered) : { action: 'render', placeholders: [] };
            if (decision.action === 'lowerPriority') {
              requeue = { requeue: { priority: jobPriority.lowest, note: { lowered: true, reason: decision.reason } } };
              return { type: 'stop' };
            }
            result.placeholders = decision.placeholders.map((p) => p.page);
            if (request.resultAction === 'NEW_CONTENT') await checkNewContentNames(scope, specification, source.name, format, pages, result.contentIds ?? {}, previousTry.creatingPage);
            const skip = reusablePages(stored, pages, result.placeholders);
            if (request.resultAction === 'CONTENT_REPRESENTATION') result.representationIds = Array.from({ length: pages }, (_, index) => representationId(source.id, format, index + 1));
            if (skip.length === pages) {
              result.reused = true;
              return { type: 'stop' };
            }
            await run.progress(5);
            return { type: 'render', placeholders: decision.placeholders, skip };
          },
          page: async (page) => {
            const percentage = 5 + (95 * page.page) / Math.max(1, result.pages);
            if (request.resultAction === 'CONTENT_REPRESENTATION') {
              await pageBatch.add(page, percentage);
            } else {
              result.contentIds ??= {};
              if (!result.contentIds[page.page]) {
                const name = resultName(specification.name, source.name, format, { page: page.page, pages: result.pages });
                const retried = previousTry.creatingPage === page.page;
                await saveJobResult(em, record.id, { ...result, creatingPage: page.page });
                result.contentIds[page.page] = await createResultContent(run, scope, { path: page.path, mimeType: mimeTypeOf(format) }, name, specification, retried);
                await saveJobResult(em, record.id, { ...result });
              }
              // a page image's file was moved into the cache store; this one was copied into the new content
              await rm(page.path, { force: true });
              await run.progress(percentage);
            }
            // a page the render process could not draw (malformed, an image over CONV_MAX_IMAGE_PIXELS) is a placeholder too
            if (page.placeholder && !result.placeholders.includes(page.page)) result.placeholders = [...result.placeholders, page.page].sort((a, b) => a - b);
          },
        },
        run.signal,
      );
      await pageBatch.end();
    } finally {
      await pageBatch.abandon();
      await rm(outputDir, { recursive: true, force: true });
    }
    return requeue ?? { result: { ...result } };
  });
}
