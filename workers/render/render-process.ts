import { fileURLToPath } from 'node:url';
import { JobFailure } from '../../src/modules/jobs/index.js';
import { ChildPool, runBoundedChild, type FinalMessage, type ReadyMessage } from '../child/bounded-child.js';
import type { ChildMessage, DecisionMessage, StartMessage } from './protocol.js';

const childScript = fileURLToPath(new URL('./render-child.js', import.meta.url));

/** Warm render processes with a V8 heap and resident bound of `memoryMb` (workers/child/bounded-child.ts). */
export function renderPool(memoryMb: number, maxIdle: number): ChildPool {
  return new ChildPool(childScript, memoryMb, { maxIdle });
}

export interface RenderCallbacks {
  /** a PDF opened, before its pages are parsed: a page count over the limits fails the job here (it throws) */
  opened?(pages: number): Promise<void>;
  /** after the prescan: what to render (or stop) */
  inspected(pages: number, objects: number[], countMs: number): Promise<DecisionMessage>;
  page(message: Extract<ChildMessage, { type: 'page' }>): Promise<void>;
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
