import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { JobFailure } from '../../src/modules/jobs/queue.js';

export interface ChildBounds {
  memoryMb: number;
  timeoutMs: number;
}

/** The job failures of one kind of child (conversion, text extraction): each names its reason code. */
export interface ChildFailures {
  memoryExceeded(): JobFailure;
  timedOut(): JobFailure;
  crashed(detail: string): JobFailure;
}

/** Messages every bounded child sends last: done, or failed with a reason code. */
export type FinalMessage = { type: 'done' } | { type: 'failed'; reasonCode: string; message: string };

/** Resident set size of a process in bytes (Linux), or 0 when it is gone. */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Runs `script` in a child process with a hard memory bound and a deadline, sends it `start`, and hands
 * every message but the final one to `onMessage` (one after the other). The V8 heap is capped by
 * --max-old-space-size; native memory (canvas, sharp, pdfjs buffers) is not, so the child's resident
 * size is watched and the child killed above the bound. Either way, and on the deadline, the job fails
 * with the failure of `failures` while the service and the other jobs go on.
 */
export function runBoundedChild<M extends { type: string }>(
  script: string,
  start: unknown,
  bounds: ChildBounds,
  failures: ChildFailures,
  onMessage: (message: M, child: ChildProcess) => Promise<void>,
): Promise<void> {
  const child = fork(script, [], {
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
        if (bytes > limitBytes) settle(failures.memoryExceeded());
      });
    }, 50);
    const deadline = setTimeout(() => settle(failures.timedOut()), bounds.timeoutMs);
    // messages are handled one after the other: one is dealt with before the next is looked at
    let queue = Promise.resolve();
    child.on('message', (raw) => {
      const message = raw as M | FinalMessage;
      queue = queue.then(async () => {
        if (outcome) return;
        try {
          if (message.type === 'done') settle('done');
          else if (message.type === 'failed') {
            const failed = message as Extract<FinalMessage, { type: 'failed' }>;
            settle(new JobFailure(failed.reasonCode, failed.message));
          } else await onMessage(message as M, child);
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
          outcome = heap ? failures.memoryExceeded() : failures.crashed(`${signal ?? `exit code ${code}`}${stderr ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`);
        }
        if (outcome === 'done') resolve();
        else reject(outcome);
      });
    });
    child.on('error', (error) => settle(error));
    child.send(start as object);
  });
}
