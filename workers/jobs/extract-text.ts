import { fileURLToPath } from 'node:url';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../src/config.js';
import type { Services } from '../../src/context.js';
import { inProcessText, readHead, storableText, textKindOf } from '../../src/modules/fulltext/extract.js';
import { findResourceToIndex, resourcesWithoutText, type ResourceToIndex } from '../../src/modules/fulltext/operations.js';
import { textIndexOf } from '../../src/modules/fulltext/text-index.js';
import { JobFailure, type JobHandler } from '../../src/modules/jobs/queue.js';
import { currentRepository, repositoryNameOf } from '../../src/modules/repositories/operations.js';
import { freshChildren, runBoundedChild } from '../child/bounded-child.js';
import type { ExtractMessage, ExtractStart } from '../extract/protocol.js';

const childScript = fileURLToPath(new URL('../extract/extract-child.js', import.meta.url));

type Extracted = { text: string; truncated: boolean } | { skipped: string };

/** The text of one resource, within the bounds of the configuration (size read, characters kept, memory and time of the child). */
async function extractText(config: Config, file: string, resource: ResourceToIndex): Promise<Extracted> {
  if (resource.fileSize > config.FULLTEXT_MAX_INPUT_BYTES) return { skipped: `larger than FULLTEXT_MAX_INPUT_BYTES (${config.FULLTEXT_MAX_INPUT_BYTES} bytes)` };
  const kind = textKindOf(resource.mimeType, resource.name, await readHead(file, 1024));
  if (!kind) return { skipped: `no text is read from ${resource.mimeType}` };
  const maxChars = config.FULLTEXT_MAX_TEXT_CHARS;
  if (kind !== 'pdf' && kind !== 'docx') return inProcessText(file, kind, maxChars);
  let extracted: Extracted | undefined;
  const start: ExtractStart = { type: 'start', inputPath: file, fileName: resource.name, kind, maxChars };
  const bounds = { memoryMb: config.FULLTEXT_EXTRACT_MEMORY_MB, timeoutMs: config.FULLTEXT_EXTRACT_TIMEOUT_MS };
  await runBoundedChild<ExtractMessage>(
    freshChildren(childScript, bounds.memoryMb),
    start,
    bounds.timeoutMs,
    {
      memoryExceeded: () => new JobFailure('extractionMemoryExceeded', `the text extraction of ${resource.name} needed more than its memory bound of ${bounds.memoryMb} MB and was stopped`),
      timedOut: () => new JobFailure('extractionTimeout', `the text extraction of ${resource.name} did not finish within its deadline of ${bounds.timeoutMs} ms and was stopped`),
      crashed: (detail) => new JobFailure('extractionFailed', `the extraction process of ${resource.name} ended unexpectedly (${detail})`),
    },
    async (message) => {
      extracted = { text: message.text, truncated: message.truncated };
    },
  );
  return extracted ?? { skipped: 'the extraction process sent no text' };
}

/** Extracts and stores the text of one resource; what happened, for the job's result. */
async function indexResource(services: Services, em: EntityManager, resource: ResourceToIndex): Promise<Record<string, unknown>> {
  const extracted = await extractText(services.config, services.contentStore.absolutePath(resource.storagePath), resource);
  const index = textIndexOf(services.config);
  if ('skipped' in extracted) {
    // an empty text marks the resource as done (a reindex passes it over); its name is indexed anyway
    await index.save(em, resource, '', false);
    return { resourceId: resource.id, skipped: extracted.skipped };
  }
  const saved = await index.save(em, resource, storableText(extracted.text), extracted.truncated);
  return { resourceId: resource.id, characters: extracted.text.length, truncated: extracted.truncated, saved };
}

/** The extraction of one new version's text. Rerun after a worker's death, it writes the same row again. */
export const extractTextHandler =
  (services: Services): JobHandler =>
  async ({ record, em }) => {
    const resourceId = String(record.serializedRequest.resourceId);
    // switched off since the upload (the record as stored now, not a cached copy): nothing is indexed
    if (!(await currentRepository(em, repositoryNameOf(record.repositoryId))).fullTextEnabled) return { result: { resourceId, skipped: 'full text is disabled' } };
    const resource = await findResourceToIndex(em, resourceId);
    if (!resource) return { result: { resourceId, skipped: 'the resource was deleted' } };
    return { result: await indexResource(services, em, resource) };
  };

const reindexBatch = 100;

/**
 * POST C/reindex: every current content without text gets it, batch by batch. A resource that cannot
 * be read (hostile, broken) is noted and passed over; a rerun after a worker's death goes on from what
 * is stored.
 */
export const reindexHandler =
  (services: Services): JobHandler =>
  async ({ record, em, progress }) => {
    let indexed = 0;
    const failed: { resourceId: string; reasonCode: string; message: string }[] = [];
    let afterId = '';
    for (;;) {
      const batch = await resourcesWithoutText(em, record.repositoryId, afterId, reindexBatch);
      if (batch.length === 0) break;
      for (const resource of batch) {
        try {
          await indexResource(services, em, resource);
          indexed++;
        } catch (error) {
          const reasonCode = error instanceof JobFailure ? error.reasonCode : 'internal';
          if (failed.length < 100) failed.push({ resourceId: resource.id, reasonCode, message: (error as Error).message });
        }
      }
      afterId = batch.at(-1)!.id;
      await progress(Math.min(99, indexed + failed.length));
    }
    return { result: { indexed, failed } };
  };
