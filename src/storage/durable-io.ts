/**
 * Durable file-system sequences off the main thread, one message each (durable-fs.ts says why).
 *
 * A small pool of worker threads started on demand, up to MAX_WORKERS: a worker blocks in fsync for
 * about a millisecond, and several let concurrent uploads share the file system's journal commits.
 * Where the worker script is missing (TypeScript sources run directly) or workers failed repeatedly,
 * the sequences run on the calling thread.
 *
 * Home-made rather than piscina, because a benchmark shows the need: a small upload is two tasks
 * here, and through piscina (tried, Nov 2026) they cost more CPU on the main process — 8 writers,
 * 4 KiB write + place, alternating runs under load ≈ 20: 0.25–0.76 ms of CPU per pair with this
 * pool, 0.60–0.99 ms with piscina; the ingest benchmark's node CPU per content rose from 5.6 to
 * 6.6–9.2 ms. This pool posts a task straight to a worker's port, busy or not, one message each way.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { placeFileSync, writeNewFileSync } from './durable-fs.js';

const MAX_WORKERS = 4;
const MAX_FAILURES = 3;

type Operation =
  | { op: 'write'; file: string; data: Uint8Array }
  | { op: 'place'; tempPath: string; target: string; parentKnown: boolean }
  | { op: 'writeAndPlace'; file: string; data: Uint8Array; target: string; parentKnown: boolean };
export type DurableIoRequest = Operation & { id: number };
export interface DurableIoReply {
  id: number;
  error?: { message: string; code?: string; syscall?: string; path?: string };
}

/**
 * writeNewFileSync in a worker: a new file with `data`, fsynced and closed. A `data` that is the
 * whole of its ArrayBuffer (Buffer.allocUnsafeSlow) is moved to the worker, not copied: it is
 * empty afterwards.
 */
export function writeNewFile(file: string, data: Uint8Array): Promise<void> {
  return run({ op: 'write', file, data });
}

/** placeFileSync in a worker: rename into place, then fsync the directories that changed. */
export function placeFile(tempPath: string, target: string, parentKnown: boolean): Promise<void> {
  return run({ op: 'place', tempPath, target, parentKnown });
}

/**
 * writeNewFile then placeFile, in one worker call: a small upload whose row is written before its
 * bytes (uploads.ts) costs the main thread one message and one reply instead of two of each.
 */
export function writeAndPlaceFile(file: string, data: Uint8Array, target: string, parentKnown: boolean): Promise<void> {
  return run({ op: 'writeAndPlace', file, data, target, parentKnown });
}

/** Runs an operation on the calling thread (a worker's, or the main one without workers). */
export function runOperationSync(operation: Operation): void {
  if (operation.op !== 'place') writeNewFileSync(operation.file, operation.data);
  if (operation.op !== 'write') placeFileSync(operation.op === 'place' ? operation.tempPath : operation.file, operation.target, operation.parentKnown);
}

/** Starts a worker ahead of the first upload (optional; FileStore.init calls it). */
export function warmUpDurableIo(): void {
  const current = getPool();
  if (current?.usable) current.warmUp();
}

function run(operation: Operation): Promise<void> {
  const current = getPool();
  if (current?.usable) return current.run(operation);
  return new Promise<void>((resolve) => {
    runOperationSync(operation);
    resolve();
  });
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: () => void; reject: (error: Error) => void }>;
}

/** Exported for its tests; the service uses the one pool behind writeNewFile and placeFile. */
export class DurableIoPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private failures = 0;

  constructor(private readonly script: URL) {}

  get usable(): boolean {
    return this.failures < MAX_FAILURES;
  }

  warmUp(): void {
    if (this.slots.length === 0) this.spawn();
  }

  run(operation: Operation): Promise<void> {
    const slot = this.pickSlot();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref(); // keep the process alive until it answers
      slot.pending.set(id, { resolve, reject });
      const message: DurableIoRequest = { ...operation, id };
      slot.worker.postMessage(message, operation.op !== 'place' && ownsItsBuffer(operation.data) ? [operation.data.buffer as ArrayBuffer] : []);
    });
  }

  /** An idle worker, else a new one while under MAX_WORKERS, else the least busy. */
  private pickSlot(): Slot {
    let best: Slot | undefined;
    for (const slot of this.slots) if (!best || slot.pending.size < best.pending.size) best = slot;
    if (best && (best.pending.size === 0 || this.slots.length >= MAX_WORKERS)) return best;
    return this.spawn();
  }

  private spawn(): Slot {
    const worker = new Worker(this.script);
    worker.unref();
    const slot: Slot = { worker, pending: new Map() };
    worker.on('message', (reply: DurableIoReply) => {
      const waiter = slot.pending.get(reply.id);
      if (!waiter) return;
      slot.pending.delete(reply.id);
      if (slot.pending.size === 0) worker.unref();
      if (reply.error) waiter.reject(Object.assign(new Error(reply.error.message), reply.error));
      else waiter.resolve();
    });
    const fail = (error: Error) => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return; // 'exit' after 'error'
      this.slots.splice(index, 1);
      this.failures++;
      for (const waiter of slot.pending.values()) waiter.reject(error);
      slot.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`durable-io worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}

/** A transfer moves the whole ArrayBuffer: only done when the view covers all of it. */
function ownsItsBuffer(data: Uint8Array): boolean {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
}

let pool: DurableIoPool | null | undefined;

function getPool(): DurableIoPool | null {
  if (pool !== undefined) return pool;
  const script = new URL('./durable-io-worker.js', import.meta.url);
  pool = existsSync(fileURLToPath(script)) ? new DurableIoPool(script) : null;
  return pool;
}
