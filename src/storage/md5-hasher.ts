/**
 * Incremental MD5 computed off the main thread.
 *
 * MD5 runs at ~650 MB/s on one core; done on the main thread it serialises with the stream
 * plumbing and halves upload throughput. Each job is a `piscina` task (md5-worker.ts) that hashes
 * what arrives on its own message channel (an MD5 state cannot move between threads, so a job
 * stays on one worker). The main thread copies chunks into 1 MiB staging buffers and transfers
 * them (one message per MiB); `ready()` applies backpressure when a worker lags by more than
 * MAX_BACKLOG_BYTES, so memory stays bounded.
 *
 * When the worker script is not available (e.g. running TypeScript sources directly), hashing
 * falls back to the main thread.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';

const STAGING_BYTES = 1024 * 1024;
/** Uploads up to this size are hashed on the main thread: cheaper than a worker round trip. */
export const SMALL_UPLOAD_BYTES = 64 * 1024;
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
const MAX_SPARE_BUFFERS = 4;
/**
 * How long a worker beyond the first waits for the next job. Piscina's default (0) ends it after
 * each burst, and starting a thread again costs tens of ms of CPU.
 */
const WORKER_IDLE_MS = 60_000;

export interface Md5Job {
  /** Adds bytes (the buffer may be reused by the caller afterwards: it is copied or consumed). */
  update(chunk: Buffer): void;
  /** undefined when more data may be sent now; otherwise a promise that resolves when it may. */
  ready(): Promise<void> | undefined;
  /** The lowercase hex digest of everything passed to update(). Call once. */
  digest(): Promise<string>;
  /** Drops the job (after an error). */
  abort(): void;
}

/** Starts an MD5 computation (in a worker thread once it outgrows SMALL_UPLOAD_BYTES, when possible). */
export function createMd5Job(): Md5Job {
  const pool = getPool();
  return pool && pool.usable ? new SmallFirstMd5Job(() => pool.start()) : new InlineMd5Job();
}

/**
 * Holds the first bytes; most uploads end before SMALL_UPLOAD_BYTES and are hashed here at once. A
 * larger one moves to a worker job with what was held (an MD5 state cannot move between threads).
 */
class SmallFirstMd5Job implements Md5Job {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private delegate: Md5Job | undefined;
  private digested = false;

  constructor(private readonly startWorkerJob: () => Md5Job) {}

  update(chunk: Buffer): void {
    if (this.digested) throw new Error('md5 job already finished');
    if (this.delegate) return this.delegate.update(chunk);
    if (this.heldBytes + chunk.length <= SMALL_UPLOAD_BYTES) {
      this.held.push(Buffer.from(chunk)); // the caller may reuse its buffer
      this.heldBytes += chunk.length;
      return;
    }
    this.delegate = this.startWorkerJob();
    for (const part of this.held) this.delegate.update(part);
    this.held = [];
    this.delegate.update(chunk);
  }

  ready(): Promise<void> | undefined {
    return this.delegate?.ready();
  }

  async digest(): Promise<string> {
    if (this.delegate) return this.delegate.digest();
    if (this.digested) throw new Error('md5 job already finished');
    this.digested = true;
    const hash = createHash('md5');
    for (const part of this.held) hash.update(part);
    this.held = [];
    return hash.digest('hex');
  }

  abort(): void {
    this.delegate?.abort();
    this.held = [];
  }
}

class InlineMd5Job implements Md5Job {
  private readonly hash = createHash('md5');
  update(chunk: Buffer): void {
    this.hash.update(chunk);
  }
  ready(): undefined {
    return undefined;
  }
  async digest(): Promise<string> {
    return this.hash.digest('hex');
  }
  abort(): void {}
}

/** Exported for its tests; uploads use the one pool behind createMd5Job. */
export class Md5Pool {
  private readonly workers: Piscina<{ port: MessagePort }, string>;
  private failures = 0;

  /**
   * Up to `size` threads, each running any number of jobs: a job waits for bytes most of the time,
   * and a queued one would stall its upload. A job goes to an idle worker, else to a new one while
   * under `size`, else to the least busy. Tasks are asynchronous: the workers keep their event loop
   * (atomics 'disabled').
   */
  constructor(script: URL, size: number) {
    this.workers = new Piscina({
      filename: script.href,
      minThreads: 1,
      maxThreads: size,
      idleTimeout: WORKER_IDLE_MS,
      concurrentTasksPerWorker: Number.MAX_SAFE_INTEGER,
      atomics: 'disabled',
      loadBalancer: (_task, workers) => {
        if (workers.length === 0) return null;
        const leastBusy = workers.reduce((best, worker) => (worker.currentUsage < best.currentUsage ? worker : best));
        return leastBusy.currentUsage === 0 || workers.length >= size ? leastBusy : null;
      },
    });
  }

  /** After repeated worker failures (cannot start, crashes), hash on the main thread instead. */
  get usable(): boolean {
    return this.failures < 3;
  }

  start(): Md5Job {
    const { port1, port2 } = new MessageChannel();
    const result = this.workers.run({ port: port2 }, { transferList: [port2] }).catch((error: unknown) => {
      this.failures++;
      throw new Error(`md5 ${(error as Error).message}`);
    });
    return new WorkerMd5Job(port1, result);
  }
}

class WorkerMd5Job implements Md5Job {
  private staging: Buffer | undefined;
  private readonly spare: ArrayBuffer[] = [];
  private stagingLength = 0;
  private outstanding = 0;
  private error: Error | undefined;
  private done = false;
  private waiter: { resolve: () => void; reject: (e: Error) => void } | undefined;

  /** `result`: the task's digest, after a 'digest' message; it fails when the worker died. */
  constructor(
    private readonly port: MessagePort,
    private readonly result: Promise<string>,
  ) {
    port.on('message', (message: { bytes: number; data: ArrayBuffer }) => this.acknowledged(message.bytes, message.data));
    result.then(
      () => port.close(),
      (error: Error) => {
        port.close();
        this.failed(error);
      },
    );
  }

  update(chunk: Buffer): void {
    if (this.done) throw new Error('md5 job already finished');
    let offset = 0;
    while (offset < chunk.length) {
      if (!this.staging) {
        const reuse = this.spare.pop();
        this.staging = reuse ? Buffer.from(reuse) : Buffer.allocUnsafeSlow(STAGING_BYTES);
        this.stagingLength = 0;
      }
      const copied = chunk.copy(this.staging, this.stagingLength, offset);
      offset += copied;
      this.stagingLength += copied;
      if (this.stagingLength === STAGING_BYTES) this.flush();
    }
  }

  ready(): Promise<void> | undefined {
    if (this.error) return Promise.reject(this.error);
    if (this.outstanding <= MAX_BACKLOG_BYTES) return undefined;
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  digest(): Promise<string> {
    if (this.error) return Promise.reject(this.error);
    if (this.done) return Promise.reject(new Error('md5 job already finished'));
    this.flush();
    this.done = true;
    this.port.postMessage({ op: 'digest' });
    return this.result;
  }

  abort(): void {
    if (this.done) return;
    this.done = true;
    this.staging = undefined;
    this.spare.length = 0;
    this.waiter = undefined;
    this.port.postMessage({ op: 'abort' });
  }

  private acknowledged(bytes: number, data: ArrayBuffer): void {
    this.outstanding -= bytes;
    if (data.byteLength === STAGING_BYTES && !this.done && this.spare.length < MAX_SPARE_BUFFERS) this.spare.push(data);
    if (this.waiter && this.outstanding <= MAX_BACKLOG_BYTES) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve();
    }
  }

  private failed(error: Error): void {
    this.error = error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }

  private flush(): void {
    if (!this.staging || this.stagingLength === 0) return;
    const data = this.staging.buffer; // allocUnsafeSlow / a returned buffer: an ArrayBuffer of its own
    const length = this.stagingLength;
    this.staging = undefined;
    this.stagingLength = 0;
    this.outstanding += length;
    this.port.postMessage({ op: 'update', data, length }, [data as ArrayBuffer]);
  }
}

/** Starts a hashing worker ahead of the first upload (optional; FileStore.init calls it). */
export function warmUpMd5Workers(): void {
  getPool();
}

let pool: Md5Pool | null | undefined;

function getPool(): Md5Pool | null {
  if (pool !== undefined) return pool;
  const script = new URL('./md5-worker.js', import.meta.url);
  const size = Math.max(1, Math.min(4, availableParallelism() - 1));
  pool = existsSync(fileURLToPath(script)) ? new Md5Pool(script, size) : null;
  return pool;
}
