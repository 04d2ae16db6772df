/**
 * Durable file-system sequences off the main thread, one task each (durable-fs.ts says why), on a
 * `piscina` pool of up to MAX_WORKERS threads: a worker blocks in fsync for about a millisecond, and
 * several let concurrent uploads share the file system's journal commits. Where the worker script is
 * missing (TypeScript sources run directly) or workers died repeatedly, the sequences run on the
 * calling thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { placeFileSync, writeNewFileSync } from './durable-fs.js';

const MAX_WORKERS = 4;
const MAX_FAILURES = 3;
/**
 * How long a worker beyond the first waits for work. Piscina's default (0) ends it after each burst;
 * starting a thread again costs tens of ms of CPU (ingest measured 34 ms of node CPU per content instead of 7).
 */
export const WORKER_IDLE_MS = 60_000;

export type DurableIoRequest =
  | { op: 'write'; file: string; data: Uint8Array }
  | { op: 'place'; tempPath: string; target: string; parentKnown: boolean };
/** A failure comes back as data: an Error thrown across threads loses its code, syscall and path. */
export interface DurableIoReply {
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

/** Starts a worker ahead of the first upload (optional; FileStore.init calls it). */
export function warmUpDurableIo(): void {
  getPool();
}

async function run(request: DurableIoRequest): Promise<void> {
  const current = getPool();
  if (current?.usable) return current.run(request);
  if (request.op === 'write') writeNewFileSync(request.file, request.data);
  else placeFileSync(request.tempPath, request.target, request.parentKnown);
}

/** Exported for its tests; the service uses the one pool behind writeNewFile and placeFile. */
export class DurableIoPool {
  private readonly workers: Piscina<DurableIoRequest, DurableIoReply>;
  private failures = 0;

  constructor(script: URL) {
    this.workers = new Piscina({ filename: script.href, minThreads: 1, maxThreads: MAX_WORKERS, idleTimeout: WORKER_IDLE_MS });
  }

  /** After repeated worker deaths the callers run the sequences on their own thread. */
  get usable(): boolean {
    return this.failures < MAX_FAILURES;
  }

  async run(request: DurableIoRequest): Promise<void> {
    let reply: DurableIoReply;
    try {
      const moved = request.op === 'write' && ownsItsBuffer(request.data) ? [request.data.buffer as ArrayBuffer] : [];
      reply = await this.workers.run(request, { transferList: moved });
    } catch (error) {
      // the worker never throws (failures are replies): the thread itself died
      this.failures++;
      throw new Error(`durable-io ${(error as Error).message}`);
    }
    if (reply.error) throw Object.assign(new Error(reply.error.message), reply.error);
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
