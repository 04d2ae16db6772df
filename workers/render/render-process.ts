import { fileURLToPath } from 'node:url';
import { JobFailure } from '../../src/modules/jobs/queue.js';
import { runBoundedChild, type ChildBounds, type FinalMessage } from '../child/bounded-child.js';
import type { ChildMessage, DecisionMessage, StartMessage } from './protocol.js';

const childScript = fileURLToPath(new URL('./render-child.js', import.meta.url));

export type RenderBounds = ChildBounds;

export interface RenderCallbacks {
  /** after the prescan: what to render (or stop) */
  inspected(pages: number, objects: number[], countMs: number): Promise<DecisionMessage>;
  page(message: Extract<ChildMessage, { type: 'page' }>): Promise<void>;
}

/**
 * Runs one conversion's rendering in a bounded child process (workers/child/bounded-child.ts): over its
 * memory bound or deadline the job fails with a clear message while the service and the other jobs go on.
 */
export function renderInChild(start: StartMessage, bounds: RenderBounds, callbacks: RenderCallbacks): Promise<void> {
  const memoryExceeded = () => new JobFailure('conversionMemoryExceeded', `the conversion of ${start.fileName} needed more than its memory bound of ${bounds.memoryMb} MB and was stopped`);
  return runBoundedChild<Exclude<ChildMessage, FinalMessage>>(
    childScript,
    start,
    bounds,
    {
      memoryExceeded,
      timedOut: () => new JobFailure('conversionTimeout', `the conversion of ${start.fileName} did not finish within its deadline of ${bounds.timeoutMs} ms and was stopped`),
      crashed: (detail) => new JobFailure('conversionFailed', `the render process of ${start.fileName} ended unexpectedly (${detail})`),
    },
    async (message, child) => {
      if (message.type === 'inspected') child.send(await callbacks.inspected(message.pages, message.objects, message.countMs));
      else await callbacks.page(message);
    },
  );
}
