import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { missingRows } from '../../db/missing-rows.js';
import { isRefusedValue, isStatementTimeout } from '../../errors.js';
import { JobFailure, statementTimedOut, type JobHandler } from '../jobs/queue.js';
import { addJobContents, othersWaiting, saveJobResult } from '../jobs/records.js';
import { currentRepository, repositoryNameOf } from '../repositories/operations.js';
import { StoredFileUnavailableError } from '../../storage/store.js';
import { hasPdfMark, pdfMarkBytes, readHead, textKindOf, type TextKind } from '../../text/extract.js';
import {
  clearExtractionFailures,
  countFailedResources,
  countResourcesWithoutText,
  dequeue,
  dropQueued,
  markExtractionFailures,
  queuedWithoutJob,
  resourcesWithoutText,
  submitExtraction,
  takeQueuedResources,
  type ResourceText,
  type ResourceToIndex,
} from './operations.js';
import { textIndexOf } from './text-index.js';

/** How OCR reads (OCR_*): null when it is off (images are not read, PDF pages without text stay without). */
export interface OcrSettings {
  languages: string[];
  pageTimeoutMs: number;
  dpi: number;
  /** when (epoch ms) OCR stops, ahead of the extraction's deadline: the pages left are noted, the text read so far kept */
  stopBy: number;
}

/** One resource's text to read: its file, of a kind read, up to `maxChars` characters (the rest is dropped and the text marked truncated). */
export interface TextExtractionRequest {
  inputPath: string;
  fileName: string;
  kind: TextKind;
  maxChars: number;
  ocr: OcrSettings | null;
}

/** A resource's text as read, with what was left out and why (`notes`: a page whose OCR was over its bound, …). */
export interface ExtractedText {
  text: string;
  truncated: boolean;
  notes: string[];
}

/**
 * Reads texts outside the service's process, within bounds of memory and time (the workers implement
 * it with bounded extraction processes, workers/extract/extract-process.ts): the text as the index
 * keeps it (`storableText`), or undefined when none was sent; `signal` (the job's cancellation) stops it.
 */
export interface TextExtractor {
  extract(request: TextExtractionRequest, signal?: AbortSignal): Promise<ExtractedText | undefined>;
}

type Extracted = ExtractedText | { skipped: string };

/**
 * The text of one resource, within the bounds of the configuration (size read, characters kept, and
 * the extractor's memory and time); `signal` (the job's cancellation) stops the extractor.
 */
async function extractText(services: Services, extractor: TextExtractor, resource: ResourceToIndex, signal?: AbortSignal): Promise<Extracted> {
  const { config } = services;
  if (resource.fileSize > config.FULLTEXT_MAX_INPUT_BYTES) return { skipped: `larger than FULLTEXT_MAX_INPUT_BYTES (${config.FULLTEXT_MAX_INPUT_BYTES} bytes)` };
  const notRead = { skipped: `no text is read from ${resource.mimeType}` };
  // the upload's first bytes told whether it is a PDF (the queue row): a kind not read opens no file (an S3 store would download it)
  if (resource.pdfMark != null && !textKindOf(resource.mimeType, resource.name, resource.pdfMark)) return notRead;
  return services.contentStore.withLocalFile(resource.storagePath, async (file) => {
    // the first bytes tell a PDF whatever it is called; the text itself is read in the extraction process only
    const kind = textKindOf(resource.mimeType, resource.name, resource.pdfMark ?? hasPdfMark(await readHead(file, pdfMarkBytes)));
    if (!kind) return notRead;
    const ocr = config.OCR_ENABLED
      ? { languages: config.OCR_LANGUAGES, pageTimeoutMs: config.OCR_PAGE_TIMEOUT_MS, dpi: config.OCR_DPI, stopBy: Date.now() + config.FULLTEXT_EXTRACT_TIMEOUT_MS * 0.9 }
      : null;
    if (kind === 'image' && !ocr) return { skipped: 'OCR_ENABLED is false: no text is read from images' };
    const request = { inputPath: file, fileName: resource.name, kind, maxChars: config.FULLTEXT_MAX_TEXT_CHARS, ocr };
    return (await extractor.extract(request, signal)) ?? { skipped: 'the extraction process sent no text' };
  });
}

/**
 * What became of one resource's extraction: its text (empty when none is read), why it failed, or
 * that it is gone (its content was purged while the job ran: nothing to index, nothing failed).
 */
export type Outcome<R> = { resource: R; text: ResourceText } | { resource: R; failure: { reasonCode: string; message: string; fileMissing: boolean } } | { resource: R; gone: true };

/** Extracts one resource's text; a failure (bounds, unreadable file) is its own outcome, not the batch's; a cancellation is the job's. */
async function extractOne<R extends ResourceToIndex>(services: Services, extractor: TextExtractor, resource: R, signal?: AbortSignal): Promise<Outcome<R>> {
  try {
    const extracted = await extractText(services, extractor, resource, signal);
    // an empty text marks the resource as done (a reindex passes it over); its name is indexed anyway
    if ('skipped' in extracted) return { resource, text: { resourceId: resource.id, text: '', truncated: false, notes: [extracted.skipped] } };
    return { resource, text: { resourceId: resource.id, ...extracted } };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const fileMissing = error instanceof StoredFileUnavailableError || (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { resource, failure: { reasonCode: error instanceof JobFailure ? error.reasonCode : 'internal', message: (error as Error).message, fileMissing } };
  }
}

/**
 * Whether a failure is the resource's own (a bomb, the deadline, a corrupt file, a text Postgres refuses
 * or indexes too slowly): it would fail again, so a reindex passes the resource over unless forced.
 * Bytes missing from the store and internal errors are the service's: a reindex tries again.
 */
const ownFailure = (failure: { reasonCode: string; fileMissing: boolean }) => !failure.fileMissing && failure.reasonCode !== 'internal';

export interface BatchOptions {
  /** the job's cancellation: the extraction under way is stopped (its process killed) and nothing more is stored */
  signal?: AbortSignal;
  /** asked after each resource: true leaves the rest of the batch unread (the job gives its turn up) */
  stop?: () => Promise<boolean>;
}

/**
 * Extracts a batch, one resource after another (all, or up to where `stop` says so), stores their texts
 * in one statement and marks the resources that failed for reasons of their own; answers the outcomes
 * of the resources read (exported for its test).
 */
export async function indexBatch<R extends ResourceToIndex>(
  services: Services,
  extractor: TextExtractor,
  em: EntityManager,
  repositoryId: string,
  resources: R[],
  options: BatchOptions = {},
): Promise<Outcome<R>[]> {
  const extracted: Outcome<R>[] = [];
  for (const resource of resources) {
    options.signal?.throwIfAborted();
    extracted.push(await extractOne(services, extractor, resource, options.signal));
    if (extracted.length < resources.length && (await options.stop?.())) break;
  }
  // a file missing because its content was purged meanwhile is no failure (a missing file of a resource still there is)
  const gone = await missingRows(em, 'resource', extracted.flatMap((outcome) => ('failure' in outcome && outcome.failure.fileMissing ? [outcome.resource.id] : [])));
  const outcomes = await storeTexts(
    services,
    em,
    repositoryId,
    extracted.map((outcome): Outcome<R> => (gone.has(outcome.resource.id) ? { resource: outcome.resource, gone: true } : outcome)),
  );
  const own = outcomes.flatMap((outcome) => ('failure' in outcome && ownFailure(outcome.failure) ? [{ resourceId: outcome.resource.id, ...outcome.failure }] : []));
  await markExtractionFailures(em, repositoryId, own.map(({ resourceId, reasonCode, message }) => ({ resourceId, reasonCode, message })));
  return outcomes;
}

/**
 * Stores the texts of a batch's outcomes in one statement. A text Postgres refuses (a value no
 * storableText rule foresaw), or whose indexing runs past JOB_STATEMENT_TIMEOUT_MS (a parser's slow
 * case no rule foresaw), becomes its resource's failure, not the batch's: otherwise the batch stays
 * queued and every later job of the repository fails on it again. (Exported for its test.)
 */
export async function storeTexts<R extends ResourceToIndex>(services: Services, em: EntityManager, repositoryId: string, outcomes: Outcome<R>[]): Promise<Outcome<R>[]> {
  const index = textIndexOf(services.config);
  try {
    await index.save(em, repositoryId, outcomes.flatMap((outcome) => ('text' in outcome ? [outcome.text] : [])));
    return outcomes;
  } catch (error) {
    if (!isRefusedValue(error) && !isStatementTimeout(error)) throw error;
  }
  const separately: Outcome<R>[] = [];
  for (const outcome of outcomes) {
    try {
      if ('text' in outcome) await index.save(em, repositoryId, [outcome.text]);
      separately.push(outcome);
    } catch (error) {
      const failure = isStatementTimeout(error)
        ? statementTimedOut(services.config, `the indexing of the text of ${outcome.resource.name}`)
        : isRefusedValue(error)
          ? new JobFailure('extractionFailed', `the text of ${outcome.resource.name} could not be stored: ${(error as Error).message}`)
          : undefined;
      if (!failure) throw error;
      separately.push({ resource: outcome.resource, failure: { reasonCode: failure.reasonCode, message: failure.message, fileMissing: false } });
    }
  }
  return separately;
}

/** Resources an extraction job takes at a time: their texts are written together. */
const extractionBatch = 50;
/** Failures a job's result lists at most. */
const listedFailures = 100;
/**
 * An extraction job's turn: past it, the job gives its slot up (back to the queue with what it holds)
 * as soon as an extraction job of another uploader waits, so one uploader's slow or hostile files hold
 * no slot against another's one-line text for longer than one extraction.
 */
export const extractionTurnMs = 1_000;

interface ExtractionResult {
  extracted: number;
  failed: { resourceId: string; contentIds: string[]; reasonCode: string; message: string }[];
  purgedMeanwhile: number;
}

/**
 * The extraction of the texts its uploader queued in a repository (docs/search.md, extraction): batch
 * after batch until none queued up to the job's creation is left. A batch's texts are stored in one
 * statement and its rows leave the queue after them, so a worker killed midway leaves no text of that
 * batch and the job's rerun (Agenda's lock expired) takes the same rows again. After its turn
 * (`extractionTurnMs`) the job goes back to the queue when another uploader's extraction waits, with
 * what it counted so far in its result. A resource that cannot be read is listed in the result and
 * left without text, marked when the failure is its own; when nothing could be extracted, the job ends
 * in panic with the first failure's reason.
 */
export const extractTextJobHandler =
  (services: Services, extractor: TextExtractor): JobHandler =>
  async ({ record, em, signal }) => {
    // switched off since the upload (the record as stored now, not a cached copy): nothing is indexed
    if (!(await currentRepository(em, repositoryNameOf(record.repositoryId))).fullTextEnabled) {
      return { result: { skipped: 'full text is disabled', dropped: await dropQueued(em, record) } };
    }
    // what the job's earlier turns counted
    const earlier = (record.serializedResult ?? {}) as Partial<ExtractionResult>;
    const result: ExtractionResult = { extracted: earlier.extracted ?? 0, failed: [...(earlier.failed ?? [])], purgedMeanwhile: earlier.purgedMeanwhile ?? 0 };
    let turnEnds = performance.now() + extractionTurnMs;
    const turnOver = async () => {
      if (performance.now() < turnEnds) return false;
      // asked once a turn: while no other uploader waits, the job goes on
      turnEnds = performance.now() + extractionTurnMs;
      return othersWaiting(em, record.jobName, record.owner);
    };
    for (;;) {
      const { queued, resources } = await takeQueuedResources(em, record, extractionBatch);
      if (queued.length === 0) break;
      await addJobContents(em, record.id, resources.flatMap((r) => r.contentIds), resources.map((r) => r.name));
      const outcomes = await indexBatch(services, extractor, em, record.repositoryId, resources, { signal, stop: turnOver });
      for (const outcome of outcomes) {
        if ('text' in outcome) result.extracted++;
        else if ('gone' in outcome) result.purgedMeanwhile++;
        else if (result.failed.length < listedFailures) {
          const { reasonCode, message } = outcome.failure;
          result.failed.push({ resourceId: outcome.resource.id, contentIds: outcome.resource.contentIds, reasonCode, message });
        }
      }
      // what was read leaves the queue, and the rows of resources gone before; the rest stays the job's for its next turn
      const unread = new Set(resources.slice(outcomes.length).map((r) => r.id));
      await dequeue(em, record.id, queued.filter((id) => !unread.has(id)));
      if (unread.size > 0) {
        await saveJobResult(em, record.id, { ...result });
        return { requeue: {} };
      }
    }
    if (result.extracted === 0 && result.failed.length > 0) throw new JobFailure(result.failed[0]!.reasonCode, result.failed[0]!.message);
    const { purgedMeanwhile, ...counted } = result;
    return { result: { ...counted, ...(purgedMeanwhile > 0 && { purgedMeanwhile }) } };
  };

const reindexBatch = 100;

/**
 * POST C/reindex: every current content without text gets it, batch by batch. A resource that cannot
 * be read (hostile, broken) is noted and passed over, and marked when the failure is its own; marked
 * resources are passed over by later reindexes (`passedOver` counts them) unless the reindex is forced
 * (`serializedRequest.force`), which clears the marks of those it extracts now. A rerun after a
 * worker's death goes on from what is stored.
 */
export const reindexJobHandler =
  (services: Services, extractor: TextExtractor): JobHandler =>
  async ({ record, em, progress, signal }) => {
    const force = (record.serializedRequest as { force?: boolean }).force === true;
    let indexed = 0;
    const failed: { resourceId: string; reasonCode: string; message: string }[] = [];
    let afterId = '';
    // counted before the run marks new failures: those of earlier runs
    const passedOver = force ? 0 : await countFailedResources(em, record.repositoryId);
    // progress is a percentage: of what was without text when this run began (a rerun's remainder);
    // every resource taken counts, failed ones too (the list of failures is capped, the count is not)
    const total = await countResourcesWithoutText(em, record.repositoryId, force);
    let done = 0;
    for (;;) {
      const batch = await resourcesWithoutText(em, record.repositoryId, force, afterId, reindexBatch);
      if (batch.length === 0) break;
      const outcomes = await indexBatch(services, extractor, em, record.repositoryId, batch, { signal });
      for (const outcome of outcomes) {
        if ('text' in outcome) indexed++;
        else if ('failure' in outcome && failed.length < listedFailures) {
          failed.push({ resourceId: outcome.resource.id, reasonCode: outcome.failure.reasonCode, message: outcome.failure.message });
        }
      }
      if (force) await clearExtractionFailures(em, outcomes.flatMap((outcome) => ('text' in outcome ? [outcome.resource.id] : [])));
      afterId = batch.at(-1)!.id;
      done += batch.length;
      await progress(Math.min(99, Math.floor((100 * done) / Math.max(1, total))));
    }
    return { result: { indexed, failed, passedOver } };
  };

/** Texts queued this long without a job are taken to have lost their wake-up call (it goes out within extractionWindowMs). */
const lostAfterMs = 5_000;

/**
 * Submits an extraction job for every repository and uploader whose queued texts no job will take (the
 * process that queued them died before submitting one); the workers' sweep calls it every FULLTEXT_SWEEP_MS.
 */
export async function submitLostExtractions(services: Services): Promise<void> {
  for (const { repositoryId, uploader } of await queuedWithoutJob(services.orm.em.fork() as EntityManager, lostAfterMs)) submitExtraction(services, repositoryId, uploader);
}
