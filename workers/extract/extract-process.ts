import { fileURLToPath } from 'node:url';
import type { ExtractedText, TextExtractor } from '../../src/modules/fulltext/index.js';
import { JobFailure } from '../../src/modules/jobs/index.js';
import { ChildPool, runBoundedChild } from '../child/bounded-child.js';
import type { ExtractMessage, ExtractStart } from './protocol.js';

const childScript = fileURLToPath(new URL('./extract-child.js', import.meta.url));

/**
 * Warm extraction processes with a V8 heap and resident bound of `memoryMb` (workers/child/bounded-child.ts):
 * every text is read in one, so a new process per resource (≈ 0.2 s of CPU to start) would cost far more
 * than reading most texts.
 */
export function extractionPool(memoryMb: number, maxIdle: number): ChildPool {
  return new ChildPool(childScript, memoryMb, { maxIdle });
}

/** The extraction jobs' text extractor: the extraction processes of `pool`, each reading within `timeoutMs`. */
export const textExtractor = (pool: ChildPool, timeoutMs: number): TextExtractor => ({
  extract: (request, signal) => extractInChild(pool, { type: 'start', ...request }, timeoutMs, signal),
});

/**
 * The text of one resource, read in a bounded extraction process of `pool` (undefined if it sent
 * none): over its memory bound or deadline the resource fails with a clear message while the
 * service and the other jobs go on; when `signal` aborts (the job was cancelled) the process is killed.
 */
async function extractInChild(pool: ChildPool, start: ExtractStart, timeoutMs: number, signal?: AbortSignal): Promise<ExtractedText | undefined> {
  let extracted: ExtractedText | undefined;
  await runBoundedChild<ExtractMessage>(
    pool,
    start,
    timeoutMs,
    {
      memoryExceeded: () => new JobFailure('extractionMemoryExceeded', `the text extraction of ${start.fileName} needed more than its memory bound of ${pool.memoryMb} MB and was stopped`),
      timedOut: () => new JobFailure('extractionTimeout', `the text extraction of ${start.fileName} did not finish within its deadline of ${timeoutMs} ms and was stopped`),
      crashed: (detail) => new JobFailure('extractionFailed', `the extraction process of ${start.fileName} ended unexpectedly (${detail})`),
    },
    async (message) => {
      extracted = { text: message.text, truncated: message.truncated, notes: message.notes };
    },
    signal,
  );
  return extracted;
}
