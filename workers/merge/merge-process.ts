import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/config.js';
import type { PdfMerger } from '../../src/modules/conversion/index.js';
import { JobFailure } from '../../src/modules/jobs/index.js';
import { ChildPool, runBoundedChild, type FinalMessage, type ReadyMessage } from '../child/bounded-child.js';
import type { ChildMessage } from './protocol.js';

const childScript = fileURLToPath(new URL('./merge-child.js', import.meta.url));

/** Warm merge processes with a V8 heap and resident bound of `memoryMb` (workers/child/bounded-child.ts). */
export function mergePool(memoryMb: number, maxIdle: number): ChildPool {
  return new ChildPool(childScript, memoryMb, { maxIdle });
}

/**
 * The merge job's merger: a bounded merge process of `pool` per merge, within CONV_RENDER_TIMEOUT_MS;
 * over its memory bound or deadline the job fails with a clear message; when `signal` aborts (the job
 * was cancelled), the process is killed.
 */
export function pdfMerger(pool: ChildPool, config: Config): PdfMerger {
  return {
    async merge(request, merged, signal) {
      const names = request.inputs.map((input) => input.fileName).join(', ');
      let pages = 0;
      await runBoundedChild<Exclude<ChildMessage, FinalMessage | ReadyMessage>>(
        pool,
        { type: 'start', ...request },
        config.CONV_RENDER_TIMEOUT_MS,
        {
          memoryExceeded: () => new JobFailure('conversionMemoryExceeded', `the merge of ${names} needed more than its memory bound of ${pool.memoryMb} MB and was stopped`),
          timedOut: () => new JobFailure('conversionTimeout', `the merge of ${names} did not finish within its deadline of ${config.CONV_RENDER_TIMEOUT_MS} ms and was stopped`),
          crashed: (detail) => new JobFailure('conversionFailed', `the merge process of ${names} ended unexpectedly (${detail})`),
        },
        async (message) => {
          if (message.type === 'merged') await merged(message.index, message.pages);
          else pages = message.pages;
        },
        signal,
      );
      return pages;
    },
  };
}
