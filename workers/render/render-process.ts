import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/config.js';
import type { PageRenderer, RenderCallbacks } from '../../src/modules/conversion/index.js';
import { JobFailure } from '../../src/modules/jobs/index.js';
import { ChildPool, runBoundedChild, type FinalMessage, type ReadyMessage } from '../child/bounded-child.js';
import { maxPagePixels, type ChildMessage, type StartMessage } from './protocol.js';

const childScript = fileURLToPath(new URL('./render-child.js', import.meta.url));

/** Warm render processes with a V8 heap and resident bound of `memoryMb` (workers/child/bounded-child.ts). */
export function renderPool(memoryMb: number, maxIdle: number): ChildPool {
  return new ChildPool(childScript, memoryMb, { maxIdle });
}

/**
 * Runs one conversion's rendering in a bounded render process of `pool`: over its memory bound or
 * deadline the job fails with a clear message while the service and the other jobs go on; when `signal`
 * aborts (the job was cancelled), the process is killed.
 */
export function renderInChild(pool: ChildPool, start: StartMessage, timeoutMs: number, callbacks: RenderCallbacks, signal?: AbortSignal): Promise<void> {
  return runBoundedChild<Exclude<ChildMessage, FinalMessage | ReadyMessage>>(
    pool,
    start,
    timeoutMs,
    {
      memoryExceeded: () => new JobFailure('conversionMemoryExceeded', `the conversion of ${start.fileName} needed more than its memory bound of ${pool.memoryMb} MB and was stopped`),
      timedOut: () => new JobFailure('conversionTimeout', `the conversion of ${start.fileName} did not finish within its deadline of ${timeoutMs} ms and was stopped`),
      crashed: (detail) => new JobFailure('conversionFailed', `the render process of ${start.fileName} ended unexpectedly (${detail})`),
    },
    async (message, child) => {
      if (message.type === 'opened') await callbacks.opened?.(message.pages);
      else if (message.type === 'inspected') child.send(await callbacks.inspected(message.pages, message.objects, message.countMs));
      else await callbacks.page(message);
    },
    signal,
  );
}

/** The convert job's renderer: the render processes of `pool`, each rendering within CONV_RENDER_TIMEOUT_MS. */
export function pageRenderer(pool: ChildPool, config: Config): PageRenderer {
  return {
    maxPagePixels: maxPagePixels(config.CONV_MAX_IMAGE_PIXELS, pool.memoryMb),
    render: (request, callbacks, signal) => renderInChild(pool, { type: 'start', ...request }, config.CONV_RENDER_TIMEOUT_MS, callbacks, signal),
  };
}
