import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import type { Socket } from 'node:net';
import { JobFailure } from '../../src/modules/jobs/index.js';

/** The job failures of one kind of child (conversion, text extraction): each names its reason code. */
export interface ChildFailures {
  memoryExceeded(): JobFailure;
  timedOut(): JobFailure;
  crashed(detail: string): JobFailure;
}

/** Messages every bounded child sends last: done, or failed with a reason code. */
export type FinalMessage = { type: 'done' } | { type: 'failed'; reasonCode: string; message: string };

/** What a pooled child sends once it has loaded its libraries and waits for its first job. */
export type ReadyMessage = { type: 'ready' };

/** Bytes of a memory page, which /proc/<pid>/statm counts in: this process's resident size both ways, once. */
const pageBytes = (() => {
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    const kilobytes = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    return 2 ** Math.round(Math.log2((kilobytes * 1024) / pages));
  } catch {
    return 4096; // no /proc: residentBytes answers 0 anyway
  }
})();

/** The resident size in bytes from the text of /proc/<pid>/statm (its second field, in pages). */
const statmResident = (text: string) => Number(text.split(' ')[1] ?? 0) * pageBytes;

/** Resident set size of a process in bytes (Linux), or 0 when it is gone. */
function residentBytes(pid: number): number {
  try {
    return statmResident(readFileSync(`/proc/${pid}/statm`, 'utf8'));
  } catch {
    return 0; // gone
  }
}

/**
 * Reads a process's resident size again and again (the watchdog: 20 times a second per job) through
 * /proc/<pid>/statm kept open, one pread a reading; 0 when the process is gone. /proc/<pid>/status opened
 * each time (open, stat, read, close, 1.5 kB the kernel writes out and a regular expression scans) took
 * ≈ 70 µs a reading, this ≈ 17 µs (docs/benchmarks.md, "conversion — fewer statements a job").
 */
function residentReader(pid: number): { read(): number; close(): void } {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/statm`, 'r');
  } catch {
    // gone already
  }
  const buffer = Buffer.alloc(128);
  return {
    read: () => {
      if (fd === undefined) return 0;
      try {
        return statmResident(buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0)));
      } catch {
        return 0; // gone
      }
    },
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

const isAlive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function forkBounded(script: string, memoryMb: number): ChildProcess {
  return fork(script, [], {
    execArgv: [
      `--max-old-space-size=${Math.max(32, Math.floor(memoryMb * 0.75))}`,
      // V8 sized the old generation for a small heap and, pushed by each page's pixel buffer (external
      // memory), ran a full collection every page or two: 29 on the 50-page text PDF, 18 % of the
      // render process's CPU; with an eighth of the bound to start with, 6 (profiled, docs/benchmarks.md)
      `--initial-old-space-size=${Math.max(16, Math.min(128, Math.floor(memoryMb / 8)))}`,
    ],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

/** Where a job's child process comes from, and where it goes after a job it ended itself (done or failed). */
export interface ChildSource {
  readonly memoryMb: number;
  take(): Promise<ChildProcess>;
  /** the child ended its job itself: it may serve another (a child that broke a bound or crashed is never given back) */
  giveBack(child: ChildProcess): Promise<void>;
}

export interface ChildPoolOptions {
  /** processes kept waiting between jobs */
  maxIdle: number;
  /** a process serves at most this many jobs, then a new one takes its place */
  maxJobs?: number;
  /** an idle process ends after this long without a job */
  idleMs?: number;
  /** a process not ready after this long is a failed start */
  startMs?: number;
}

/**
 * Warm child processes of one script and memory bound (the render process: loading pdfjs, canvas and
 * sharp costs ~0.5 s of CPU per process, more than rendering a 10-page document — measured by the
 * conversion benchmark's job path). A process is taken for one job at a time; the job's memory watchdog
 * and deadline apply as for a new process, and a process that broke a bound or crashed is killed,
 * never given back. A process that finished its job is kept for the next one unless its resident size
 * grew past half the bound (native memory kept from a large document) or it served `maxJobs` jobs.
 * Waiting processes do not keep the parent alive (unreferenced), and end when the parent goes.
 */
export class ChildPool implements ChildSource {
  private readonly idle = new Map<ChildProcess, NodeJS.Timeout>();
  private readonly served = new WeakMap<ChildProcess, number>();
  private closed = false;
  private readonly maxJobs: number;
  private readonly idleMs: number;
  private readonly startMs: number;

  constructor(
    private readonly script: string,
    readonly memoryMb: number,
    private readonly options: ChildPoolOptions,
  ) {
    this.maxJobs = options.maxJobs ?? 100;
    this.idleMs = options.idleMs ?? 120_000;
    this.startMs = options.startMs ?? 60_000;
  }

  /** Starts processes ahead of need, up to `maxIdle` waiting; resolves when they are ready. */
  async warm(count = this.options.maxIdle): Promise<void> {
    const starting = Array.from({ length: Math.max(0, Math.min(count, this.options.maxIdle) - this.idle.size) }, () =>
      this.start()
        .then((child) => this.park(child))
        .catch(() => undefined), // a failed start shows again when a job takes a process
    );
    await Promise.all(starting);
  }

  /** The ids of the processes waiting for a job. */
  get waitingPids(): number[] {
    return [...this.idle.keys()].map((child) => child.pid!);
  }

  async take(): Promise<ChildProcess> {
    // the process parked last first: its code is the most compiled (V8's JIT warms over a process's first
    // documents, and taking the oldest passed documents round the processes; docs/benchmarks.md, job path),
    // and the one waiting longest is the one its idle time ends
    for (const [child, timer] of [...this.idle].reverse()) {
      this.idle.delete(child);
      clearTimeout(timer);
      if (!isAlive(child)) continue;
      hold(child, true);
      return child;
    }
    const child = await this.start();
    hold(child, true);
    return child;
  }

  async giveBack(child: ChildProcess): Promise<void> {
    const served = (this.served.get(child) ?? 0) + 1;
    this.served.set(child, served);
    const grown = residentBytes(child.pid!) > (this.memoryMb * 1024 * 1024) / 2;
    if (this.closed || grown || served >= this.maxJobs || this.idle.size >= this.options.maxIdle || !isAlive(child)) child.kill('SIGKILL');
    else this.park(child);
  }

  /** Ends the waiting processes; processes at work end when their job does. */
  close(): void {
    this.closed = true;
    for (const [child, timer] of this.idle) {
      clearTimeout(timer);
      child.kill('SIGKILL');
    }
    this.idle.clear();
  }

  private park(child: ChildProcess): void {
    if (this.closed || !isAlive(child)) {
      child.kill('SIGKILL');
      return;
    }
    hold(child, false);
    const timer = setTimeout(() => {
      this.idle.delete(child);
      child.kill('SIGKILL');
    }, this.idleMs);
    timer.unref();
    this.idle.set(child, timer);
  }

  /** A new process, once it said it is ready. */
  private start(): Promise<ChildProcess> {
    const child = forkBounded(this.script, this.memoryMb);
    // what a process writes while no job listens is dropped (a full pipe would stop it)
    child.stderr?.resume();
    // a job listens for its process's errors; between jobs there is nothing to tell
    child.on('error', () => undefined);
    child.once('exit', () => {
      const timer = this.idle.get(child);
      if (timer) clearTimeout(timer);
      this.idle.delete(child);
    });
    return new Promise((resolve, reject) => {
      const failed = (detail: string) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        if (isAlive(child)) child.kill('SIGKILL');
        reject(new Error(detail));
      };
      const timer = setTimeout(() => failed(`not ready within ${this.startMs} ms`), this.startMs);
      const onMessage = (message: ReadyMessage) => {
        if (message.type !== 'ready') return;
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(child);
      };
      const onExit = (code: number | null, signal: string | null) => failed(`ended before it was ready (${signal ?? `exit code ${code}`})`);
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  }
}

/** Whether the child (its process, IPC channel and stderr pipe) keeps the parent's event loop alive. */
function hold(child: ChildProcess, referenced: boolean): void {
  const handles = [child, child.channel, child.stderr as Socket | null];
  for (const handle of handles) {
    if (referenced) handle?.ref?.();
    else handle?.unref?.();
  }
}

/**
 * Runs one job in a child process from `source` with a hard memory bound (the source's) and a deadline, sends it
 * `start`, and hands every message but the final one to `onMessage` (one after the other). The V8 heap
 * is capped by --max-old-space-size; native memory (canvas, sharp, pdfjs buffers) is not, so the child's
 * resident size is watched and the child killed above the bound. Either way, and on the deadline, the
 * job fails with the failure of `failures` while the service and the other jobs go on. When `signal`
 * aborts (the job was cancelled), the child is killed and the run fails with the signal's reason.
 */
export async function runBoundedChild<M extends { type: string }>(
  source: ChildSource,
  start: unknown,
  timeoutMs: number,
  failures: ChildFailures,
  onMessage: (message: M, child: ChildProcess) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const child = await source.take().catch((error: Error) => {
    throw failures.crashed(error.message);
  });
  let stderr = '';
  const onStderr = (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  };
  child.stderr?.on('data', onStderr);
  return new Promise<void>((resolve, reject) => {
    let outcome: Error | 'done' | undefined;
    // messages are handled one after the other: one is dealt with before the next is looked at
    let queue = Promise.resolve();
    /** the job's end: `byChild` when the child ended it itself (done, failed), so that it may serve again */
    const settle = (result: Error | 'done', byChild: boolean) => {
      if (outcome) return;
      outcome = result;
      clearInterval(watchdog);
      resident.close();
      clearTimeout(deadline);
      child.off('message', onChildMessage);
      child.off('exit', onExit);
      child.off('error', onError);
      child.stderr?.off('data', onStderr);
      signal?.removeEventListener('abort', onAbort);
      const released = byChild ? source.giveBack(child) : Promise.resolve(isAlive(child) ? void child.kill('SIGKILL') : undefined);
      void Promise.all([released, queue]).then(() => (result === 'done' ? resolve() : reject(result)));
    };
    const limitBytes = source.memoryMb * 1024 * 1024;
    const resident = residentReader(child.pid!);
    const watchdog = setInterval(() => {
      if (resident.read() > limitBytes) settle(failures.memoryExceeded(), false);
    }, 50);
    const deadline = setTimeout(() => settle(failures.timedOut(), false), timeoutMs);
    const onChildMessage = (raw: unknown) => {
      const message = raw as M | FinalMessage;
      queue = queue.then(async () => {
        if (outcome) return;
        try {
          if (message.type === 'done') settle('done', true);
          else if (message.type === 'failed') {
            const failed = message as Extract<FinalMessage, { type: 'failed' }>;
            settle(new JobFailure(failed.reasonCode, failed.message), true);
          } else await onMessage(message as M, child);
        } catch (error) {
          settle(error as Error, false);
        }
      });
    };
    const onExit = (code: number | null, signal: string | null) => {
      void queue.then(() => {
        const heap = /heap out of memory|Allocation failed/i.test(stderr);
        settle(heap ? failures.memoryExceeded() : failures.crashed(`${signal ?? `exit code ${code}`}${stderr ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`), false);
      });
    };
    const onError = (error: Error) => settle(error, false);
    const onAbort = () => settle(signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)), false);
    child.on('message', onChildMessage);
    child.on('exit', onExit);
    child.on('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    else child.send(start as object);
  });
}
