import { fork } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { JobFailure } from '../../src/modules/jobs/queue.js';
import type { ChildMessage, DecisionMessage, StartMessage } from './protocol.js';

const childScript = fileURLToPath(new URL('./render-child.js', import.meta.url));

export interface RenderBounds {
  memoryMb: number;
  timeoutMs: number;
}

export interface RenderCallbacks {
  /** after the prescan: what to render (or stop) */
  inspected(pages: number, objects: number[], countMs: number): Promise<DecisionMessage>;
  page(message: Extract<ChildMessage, { type: 'page' }>): Promise<void>;
}

/** Resident set size of a process in bytes (Linux), or 0 when it is gone. */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Runs one conversion's rendering in a child process with a hard memory bound and a deadline. The V8
 * heap is capped by --max-old-space-size; native memory (canvas, sharp, pdfjs buffers) is not, so the
 * child's resident size is watched and the child killed above the bound. Either way, and on the
 * deadline, the job fails with a clear message while the service and the other jobs go on.
 */
export function renderInChild(start: StartMessage, bounds: RenderBounds, callbacks: RenderCallbacks): Promise<void> {
  const child = fork(childScript, [], {
    execArgv: [`--max-old-space-size=${Math.max(32, Math.floor(bounds.memoryMb * 0.75))}`],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  return new Promise<void>((resolve, reject) => {
    let outcome: Error | 'done' | undefined;
    const settle = (result: Error | 'done') => {
      outcome ??= result;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const limitBytes = bounds.memoryMb * 1024 * 1024;
    const watchdog = setInterval(() => {
      void residentBytes(child.pid!).then((bytes) => {
        if (bytes > limitBytes) settle(new JobFailure('conversionMemoryExceeded', `the conversion of ${start.fileName} needed more than its memory bound of ${bounds.memoryMb} MB and was stopped`));
      });
    }, 50);
    const deadline = setTimeout(
      () => settle(new JobFailure('conversionTimeout', `the conversion of ${start.fileName} did not finish within its deadline of ${bounds.timeoutMs} ms and was stopped`)),
      bounds.timeoutMs,
    );
    // messages are handled one after the other: a page is stored before the next is looked at
    let queue = Promise.resolve();
    child.on('message', (raw) => {
      const message = raw as ChildMessage;
      queue = queue.then(async () => {
        if (outcome) return;
        try {
          if (message.type === 'inspected') child.send(await callbacks.inspected(message.pages, message.objects, message.countMs));
          else if (message.type === 'page') await callbacks.page(message);
          else if (message.type === 'done') settle('done');
          else settle(new JobFailure(message.reasonCode, message.message));
        } catch (error) {
          settle(error as Error);
        }
      });
    });
    child.on('exit', (code, signal) => {
      clearInterval(watchdog);
      clearTimeout(deadline);
      void queue.then(() => {
        if (!outcome) {
          const heap = /heap out of memory|Allocation failed/i.test(stderr);
          outcome = heap
            ? new JobFailure('conversionMemoryExceeded', `the conversion of ${start.fileName} needed more than its memory bound of ${bounds.memoryMb} MB and was stopped`)
            : new JobFailure('conversionFailed', `the render process of ${start.fileName} ended unexpectedly (${signal ?? `exit code ${code}`})${stderr ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`);
        }
        if (outcome === 'done') resolve();
        else reject(outcome);
      });
    });
    child.on('error', (error) => settle(error));
    child.send(start);
  });
}
