/**
 * Incremental MD5 computed off the main thread.
 *
 * MD5 runs at ~650 MB/s on one core; done on the main thread it serialises with the stream
 * plumbing and halves upload throughput. Jobs are spread over a small, lazily started pool of
 * worker threads (md5-worker.ts). The main thread copies chunks into 1 MiB staging buffers and
 * transfers them (one message per MiB); `ready()` applies backpressure when a worker lags by
 * more than MAX_BACKLOG_BYTES, so memory stays bounded.
 *
 * When the worker script is not available (e.g. running TypeScript sources directly), hashing
 * falls back to the main thread.
 *
 * Home-made rather than piscina: a piscina version (one task per job, fed over its own
 * MessageChannel, since an MD5 state cannot move between threads; tried Nov 2026) hashed 219–633
 * MiB/s, median 360, where this pool did 221–607, median 558 (512 MiB in 64 KiB chunks, five
 * alternating runs under load ≈ 14). The machine was too loaded to tell more; without a clear gain
 * the tested pool stays.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const STAGING_BYTES = 1024 * 1024;
/** Uploads up to this size are hashed on the main thread: cheaper than a worker round trip. */
export const SMALL_UPLOAD_BYTES = 64 * 1024;
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
const MAX_SPARE_BUFFERS = 4;

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

interface Slot {
  worker: Worker;
  jobs: Map<number, WorkerMd5Job>;
}

/** Exported for its tests; uploads use the one pool behind createMd5Job. */
export class Md5Pool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private failures = 0;

  /** After repeated worker failures (cannot start, crashes), hash on the main thread instead. */
  get usable(): boolean {
    return this.failures < 3;
  }

  constructor(
    private readonly script: URL,
    private readonly size: number,
  ) {}

  start(): Md5Job {
    const slot = this.pickSlot();
    const job = new WorkerMd5Job(this.nextId++, slot, () => this.release(slot, job));
    if (slot.jobs.size === 0) slot.worker.ref(); // keep the process alive while a digest is due
    slot.jobs.set(job.id, job);
    return job;
  }

  warmUp(): void {
    if (this.slots.length === 0) this.spawn();
  }

  private pickSlot(): Slot {
    let best: Slot | undefined;
    for (const slot of this.slots) if (!best || slot.jobs.size < best.jobs.size) best = slot;
    if (best && (best.jobs.size === 0 || this.slots.length >= this.size)) return best;
    return this.spawn();
  }

  private spawn(): Slot {
    const worker = new Worker(this.script);
    worker.unref();
    const slot: Slot = { worker, jobs: new Map() };
    worker.on('message', (message: { op: string; id: number; bytes?: number; hex?: string; data?: ArrayBuffer }) => {
      const job = slot.jobs.get(message.id);
      if (!job) return;
      if (message.op === 'ack') job.acknowledged(message.bytes ?? 0, message.data);
      else if (message.op === 'digest') job.resolved(message.hex ?? '');
    });
    const fail = (error: Error) => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return; // 'exit' after 'error'
      this.slots.splice(index, 1);
      this.failures++;
      for (const job of [...slot.jobs.values()]) job.failed(error);
      slot.jobs.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`md5 worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private release(slot: Slot, job: WorkerMd5Job): void {
    if (slot.jobs.delete(job.id) && slot.jobs.size === 0) slot.worker.unref();
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
  private digestWaiter: { resolve: (hex: string) => void; reject: (e: Error) => void } | undefined;

  constructor(
    readonly id: number,
    private readonly slot: Slot,
    private readonly onDone: () => void,
  ) {}

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
    return new Promise((resolve, reject) => {
      this.digestWaiter = { resolve, reject };
      this.slot.worker.postMessage({ op: 'digest', id: this.id });
    });
  }

  abort(): void {
    if (this.done && !this.digestWaiter) return;
    this.done = true;
    this.staging = undefined;
    this.spare.length = 0;
    this.slot.worker.postMessage({ op: 'abort', id: this.id });
    this.digestWaiter = undefined;
    this.waiter = undefined;
    this.onDone();
  }

  // --- from the pool ---

  acknowledged(bytes: number, data: ArrayBuffer | undefined): void {
    this.outstanding -= bytes;
    if (data && data.byteLength === STAGING_BYTES && !this.done && this.spare.length < MAX_SPARE_BUFFERS) {
      this.spare.push(data);
    }
    if (this.waiter && this.outstanding <= MAX_BACKLOG_BYTES) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve();
    }
  }

  resolved(hex: string): void {
    const waiter = this.digestWaiter;
    this.digestWaiter = undefined;
    this.onDone();
    waiter?.resolve(hex);
  }

  failed(error: Error): void {
    this.error = error;
    const waiter = this.waiter;
    const digestWaiter = this.digestWaiter;
    this.waiter = undefined;
    this.digestWaiter = undefined;
    waiter?.reject(error);
    digestWaiter?.reject(error);
  }

  private flush(): void {
    if (!this.staging || this.stagingLength === 0) return;
    const data = this.staging.buffer; // allocUnsafeSlow / a returned buffer: an ArrayBuffer of its own
    const length = this.stagingLength;
    this.staging = undefined;
    this.stagingLength = 0;
    this.outstanding += length;
    this.slot.worker.postMessage({ op: 'update', id: this.id, data, length }, [data as ArrayBuffer]);
  }
}

/** Starts a hashing worker ahead of the first upload (optional; FileStore.init calls it). */
export function warmUpMd5Workers(): void {
  getPool()?.warmUp();
}

let pool: Md5Pool | null | undefined;

function getPool(): Md5Pool | null {
  if (pool !== undefined) return pool;
  const script = new URL('./md5-worker.js', import.meta.url);
  const size = Math.max(1, Math.min(4, availableParallelism() - 1));
  pool = existsSync(fileURLToPath(script)) ? new Md5Pool(script, size) : null;
  return pool;
}
