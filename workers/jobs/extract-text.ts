import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../src/config.js';
import type { Services } from '../../src/context.js';
import { missingRows } from '../../src/db/missing-rows.js';
import { isRefusedValue, isStatementTimeout } from '../../src/errors.js';
import { readHead, textKindOf } from '../../src/modules/fulltext/extract.js';
import {
  countResourcesWithoutText,
  dequeue,
  dropQueued,
  queuedWithoutJob,
  resourcesWithoutText,
  submitExtraction,
  takeQueuedResources,
  type ResourceText,
  type ResourceToIndex,
} from '../../src/modules/fulltext/operations.js';
import { textIndexOf } from '../../src/modules/fulltext/text-index.js';
import { JobFailure, statementTimedOut, type JobHandler } from '../../src/modules/jobs/queue.js';
import { addJobContents } from '../../src/modules/jobs/records.js';
import { currentRepository, repositoryNameOf } from '../../src/modules/repositories/operations.js';
import type { ChildPool } from '../child/bounded-child.js';
import { extractInChild } from '../extract/extract-process.js';
import { startPeriodic, type BackgroundJob } from '../periodic.js';

type Extracted = { text: string; truncated: boolean } | { skipped: string };

/** The text of one resource, within the bounds of the configuration (size read, characters kept, memory and time of the extraction process). */
async function extractText(config: Config, processes: ChildPool, file: string, resource: ResourceToIndex): Promise<Extracted> {
  if (resource.fileSize > config.FULLTEXT_MAX_INPUT_BYTES) return { skipped: `larger than FULLTEXT_MAX_INPUT_BYTES (${config.FULLTEXT_MAX_INPUT_BYTES} bytes)` };
  // the first bytes tell a PDF whatever it is called; the text itself is read in the extraction process only
  const kind = textKindOf(resource.mimeType, resource.name, await readHead(file, 1024));
  if (!kind) return { skipped: `no text is read from ${resource.mimeType}` };
  const start = { type: 'start', inputPath: file, fileName: resource.name, kind, maxChars: config.FULLTEXT_MAX_TEXT_CHARS } as const;
  return (await extractInChild(processes, start, config.FULLTEXT_EXTRACT_TIMEOUT_MS)) ?? { skipped: 'the extraction process sent no text' };
}

/**
 * What became of one resource's extraction: its text (empty when none is read), why it failed, or
 * that it is gone (its content was purged while the job ran: nothing to index, nothing failed).
 */
export type Outcome<R> = { resource: R; text: ResourceText } | { resource: R; failure: { reasonCode: string; message: string; fileMissing: boolean } } | { resource: R; gone: true };

/** Extracts one resource's text; a failure (bounds, unreadable file) is its own outcome, not the batch's. */
async function extractOne<R extends ResourceToIndex>(services: Services, processes: ChildPool, resource: R): Promise<Outcome<R>> {
  try {
    const extracted = await extractText(services.config, processes, services.contentStore.absolutePath(resource.storagePath), resource);
    // an empty text marks the resource as done (a reindex passes it over); its name is indexed anyway
    if ('skipped' in extracted) return { resource, text: { resourceId: resource.id, text: '', truncated: false } };
    return { resource, text: { resourceId: resource.id, text: extracted.text, truncated: extracted.truncated } };
  } catch (error) {
    const fileMissing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { resource, failure: { reasonCode: error instanceof JobFailure ? error.reasonCode : 'internal', message: (error as Error).message, fileMissing } };
  }
}

/** Extracts a batch, one resource after another, and stores its texts in one statement; answers the outcomes (exported for its test). */
export async function indexBatch<R extends ResourceToIndex>(services: Services, processes: ChildPool, em: EntityManager, repositoryId: string, resources: R[]): Promise<Outcome<R>[]> {
  const extracted: Outcome<R>[] = [];
  for (const resource of resources) extracted.push(await extractOne(services, processes, resource));
  // a file missing because its content was purged meanwhile is no failure (a missing file of a resource still there is)
  const gone = await missingRows(em, 'resource', extracted.flatMap((outcome) => ('failure' in outcome && outcome.failure.fileMissing ? [outcome.resource.id] : [])));
  const outcomes = extracted.map((outcome): Outcome<R> => (gone.has(outcome.resource.id) ? { resource: outcome.resource, gone: true } : outcome));
  return storeTexts(services, em, repositoryId, outcomes);
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
 * The extraction of the texts queued in a repository (docs/search.md, extraction): batch after batch
 * until none queued up to the job's creation is left. A batch's texts are stored in one statement and
 * its rows leave the queue after them, so a worker killed midway leaves no text of that batch and the
 * job's rerun (Agenda's lock expired) takes the same rows again. A resource that cannot be read is
 * listed in the result and left without text (a reindex tries it again); when nothing could be
 * extracted, the job ends in panic with the first failure's reason.
 */
export const extractTextHandler =
  (services: Services, processes: ChildPool): JobHandler =>
  async ({ record, em }) => {
    // switched off since the upload (the record as stored now, not a cached copy): nothing is indexed
    if (!(await currentRepository(em, repositoryNameOf(record.repositoryId))).fullTextEnabled) {
      return { result: { skipped: 'full text is disabled', dropped: await dropQueued(em, record) } };
    }
    let extracted = 0;
    let purgedMeanwhile = 0;
    const failed: { resourceId: string; contentIds: string[]; reasonCode: string; message: string }[] = [];
    for (;;) {
      const { queued, resources } = await takeQueuedResources(em, record, extractionBatch);
      if (queued.length === 0) break;
      await addJobContents(em, record.id, resources.flatMap((r) => r.contentIds), resources.map((r) => r.name));
      for (const outcome of await indexBatch(services, processes, em, record.repositoryId, resources)) {
        if ('text' in outcome) extracted++;
        else if ('gone' in outcome) purgedMeanwhile++;
        else if (failed.length < listedFailures) {
          const { reasonCode, message } = outcome.failure;
          failed.push({ resourceId: outcome.resource.id, contentIds: outcome.resource.contentIds, reasonCode, message });
        }
      }
      await dequeue(em, record.id, queued);
    }
    if (extracted === 0 && failed.length > 0) throw new JobFailure(failed[0]!.reasonCode, failed[0]!.message);
    return { result: { extracted, failed, ...(purgedMeanwhile > 0 && { purgedMeanwhile }) } };
  };

const reindexBatch = 100;

/**
 * POST C/reindex: every current content without text gets it, batch by batch. A resource that cannot
 * be read (hostile, broken) is noted and passed over; a rerun after a worker's death goes on from what
 * is stored.
 */
export const reindexHandler =
  (services: Services, processes: ChildPool): JobHandler =>
  async ({ record, em, progress }) => {
    let indexed = 0;
    const failed: { resourceId: string; reasonCode: string; message: string }[] = [];
    let afterId = '';
    // progress is a percentage: of what was without text when this run began (a rerun's remainder);
    // every resource taken counts, failed ones too (the list of failures is capped, the count is not)
    const total = await countResourcesWithoutText(em, record.repositoryId);
    let done = 0;
    for (;;) {
      const batch = await resourcesWithoutText(em, record.repositoryId, afterId, reindexBatch);
      if (batch.length === 0) break;
      for (const outcome of await indexBatch(services, processes, em, record.repositoryId, batch)) {
        if ('text' in outcome) indexed++;
        else if ('failure' in outcome && failed.length < listedFailures) {
          failed.push({ resourceId: outcome.resource.id, reasonCode: outcome.failure.reasonCode, message: outcome.failure.message });
        }
      }
      afterId = batch.at(-1)!.id;
      done += batch.length;
      await progress(Math.min(99, Math.floor((100 * done) / Math.max(1, total))));
    }
    return { result: { indexed, failed } };
  };

/** Texts queued this long without a job are taken to have lost their wake-up call (it goes out within extractionWindowMs). */
const lostAfterMs = 5_000;

/**
 * Submits an extraction job for every repository whose queued texts no job will take (the process
 * that queued them died before submitting one), at the start and every FULLTEXT_SWEEP_MS.
 */
export function startExtractionSweeper(services: Services): BackgroundJob {
  const everyMs = services.config.FULLTEXT_SWEEP_MS;
  return startPeriodic(
    services.logger,
    'text-extraction-sweeper',
    everyMs,
    async () => {
      for (const repositoryId of await queuedWithoutJob(services.orm.em.fork() as EntityManager, lostAfterMs)) submitExtraction(services, repositoryId);
    },
    Math.min(everyMs, 1_000),
  );
}
