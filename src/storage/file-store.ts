/**
 * File-system content store (DESIGN §2 "files", §9 "Storage paths derive from ids").
 *
 * One instance per area: contents (`$DATA_DIR/storage` / CONTENT_STORAGE_PATH) and the cache of
 * representations (`$DATA_DIR/cache` / CACHE_STORAGE_PATH).
 *
 * Layout under `root`:
 *   .tmp/<name>        uploads in progress (swept at start: a crash leaves only these)
 *   xx/yy/<id>         committed files; xx/yy = first 4 hex digits of sha256(id)
 *
 * Uploads stream into `.tmp`, are fsynced, then renamed into place and the directory is fsynced,
 * so a crash never leaves a half-written file at a final path. The blocking sequences (a small
 * upload's write + fsync + close; rename + directory fsyncs) run in durable-io worker threads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { placeFile, warmUpDurableIo, writeAndPlaceFile, writeNewFile } from './durable-io.js';
import { noteReceivedBytes } from './garbage-pacer.js';
import { createMd5Job, warmUpMd5Workers, type Md5Job } from './md5-hasher.js';

/** Bytes kept from the start of an upload for content sniffing. */
export const HEAD_BYTES = 4100;
/**
 * Buffer of the upload sink: larger than the source's chunks so that reading continues while a
 * batch is written and hashed (with 1 MiB the source stalls on every batch: -30 % throughput).
 */
const SINK_BUFFER_BYTES = 4 * 1024 * 1024;
/** Uploads up to this size are held in memory and written, fsynced and closed in one worker call. */
const WHOLE_WRITE_BYTES = 64 * 1024;
const TEMP_DIR = '.tmp';
const ID_PATTERN = /^[A-Za-z0-9_-]{1,200}$/;
const SEGMENT_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/; // no '.', '..', '.tmp'

/** The upload exceeded `maxBytes`. Maps to HTTP 413 `tooLarge`. */
export class TooLargeError extends Error {
  readonly code = 'TOO_LARGE';
  readonly limit: number;
  constructor(limit: number) {
    super(`The content exceeds the maximum size of ${limit} bytes`);
    this.name = 'TooLargeError';
    this.limit = limit;
  }
}

/** An id or relative path that cannot name a stored file (a programming error, or tampering). */
export class InvalidStoragePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidStoragePathError';
  }
}

export interface ReceiveOptions {
  /** Reject with TooLargeError once more than this many bytes arrived. */
  maxBytes: number;
  /** Aborts the transfer (the temp file is removed and the promise rejects with an AbortError). */
  signal?: AbortSignal;
  /**
   * An upload that ends within WHOLE_WRITE_BYTES stays in memory until `commit`, which writes and
   * places it in one worker call: for a caller that records the upload between the two (its row
   * first), one worker round trip less per small upload. Its temp file exists only during `commit`.
   */
  holdSmall?: boolean;
}

export interface StagedFile {
  /** Absolute path of the temporary file (inside `<root>/.tmp`). */
  readonly tempPath: string;
  readonly size: number;
  /** MD5 of the bytes, lowercase hex. */
  readonly md5: string;
  /** The first min(size, 4100) bytes, for sniffMimeType. */
  readonly head: Buffer;
  /** Renames the temp file to `relativePath` (parents created) and fsyncs the directory. */
  commit(relativePath: string): Promise<void>;
  /** Deletes the temp file. A no-op after commit or a previous discard. */
  discard(): Promise<void>;
}

export interface WritableCheck {
  ok: boolean;
  message: string;
}

export class FileStore {
  readonly root: string;
  private readonly tempDir: string;
  /** directories this store made or found while placing files */
  private readonly knownDirectories = new Set<string>();

  constructor(root: string) {
    this.root = path.resolve(root);
    this.tempDir = path.join(this.root, TEMP_DIR);
  }

  /** Creates the root and its temp directory. */
  async init(): Promise<void> {
    await fsp.mkdir(this.tempDir, { recursive: true });
    warmUpMd5Workers();
    warmUpDurableIo();
  }

  /**
   * Deletes what is left in `.tmp` (interrupted uploads). Call once at start, before serving.
   * When several processes share the store (ROLE=…, shared volume), pass `olderThanMs` so that
   * uploads in progress in other processes are left alone. Returns the number of entries removed.
   */
  async sweepTemporary(options: { olderThanMs?: number } = {}): Promise<number> {
    const olderThanMs = options.olderThanMs ?? 0;
    let names: string[];
    try {
      names = await fsp.readdir(this.tempDir);
    } catch (error) {
      if (isNotFound(error)) return 0;
      throw error;
    }
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const name of names) {
      const full = path.join(this.tempDir, name);
      if (olderThanMs > 0) {
        const st = await fsp.lstat(full).catch(() => undefined);
        if (!st || st.mtimeMs > cutoff) continue;
      }
      await fsp.rm(full, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /**
   * The committed files (`xx/yy/<id>`, relative to root) last written more than `olderThanMs` ago,
   * in batches of up to `batchSize`: for a sweep of files no row refers to (a crash between a
   * deletion's commit and its file removals leaves such). Not `.tmp`.
   */
  async *committedFiles(olderThanMs: number, batchSize = 1000): AsyncGenerator<string[]> {
    const cutoff = Date.now() - olderThanMs;
    const names = async (dir: string) => (await fsp.readdir(path.join(this.root, dir)).catch(() => [] as string[])).filter((name) => name !== TEMP_DIR);
    let batch: string[] = [];
    for (const first of await names('')) {
      for (const second of await names(first)) {
        for (const file of await names(path.join(first, second))) {
          const relative = `${first}/${second}/${file}`;
          const st = await fsp.lstat(path.join(this.root, relative)).catch(() => undefined);
          if (!st?.isFile() || st.mtimeMs > cutoff) continue;
          batch.push(relative);
          if (batch.length >= batchSize) {
            yield batch;
            batch = [];
          }
        }
      }
    }
    if (batch.length > 0) yield batch;
  }

  /**
   * The storage path (relative to root) of the file for `id`: `xx/yy/<id>`, where xx/yy are the
   * first hex digits of sha256(id) (an even fan-out whatever the id scheme). Derived from the id
   * only. Throws InvalidStoragePathError unless the id matches [A-Za-z0-9_-]{1,200}.
   */
  pathFor(id: string): string {
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      throw new InvalidStoragePathError(`Invalid storage id: ${JSON.stringify(String(id).slice(0, 80))}`);
    }
    const hash = createHash('sha256').update(id).digest('hex');
    return `${hash.slice(0, 2)}/${hash.slice(2, 4)}/${id}`;
  }

  /** Absolute path of a relative storage path (validated: no `..`, no `.tmp`, no absolute path). */
  absolutePath(relativePath: string): string {
    if (typeof relativePath !== 'string' || relativePath.length === 0 || relativePath.length > 1024) {
      throw new InvalidStoragePathError('Invalid storage path');
    }
    const segments = relativePath.split('/');
    for (const segment of segments) {
      if (!SEGMENT_PATTERN.test(segment)) {
        throw new InvalidStoragePathError(`Invalid storage path: ${JSON.stringify(relativePath.slice(0, 200))}`);
      }
    }
    return path.join(this.root, ...segments);
  }

  /**
   * Streams `source` into a new temp file, computing size, md5 and the head in the same pass,
   * and fsyncs it. Rejects with TooLargeError past `maxBytes`, or with the source's error (client
   * disconnect); in both cases the temp file is removed. Note that on failure the source is
   * destroyed (stream.pipeline semantics).
   */
  async receive(source: Readable, options: ReceiveOptions): Promise<StagedFile> {
    const maxBytes = options.maxBytes;
    if (!(maxBytes >= 0)) throw new RangeError('maxBytes must be a non-negative number');
    const tempPath = this.tempName();
    let held: Buffer | undefined;
    const sink = new HashingFileSink(maxBytes, {
      open: () => this.inTempDirectory(() => fsp.open(tempPath, 'wx')),
      // the worker makes `.tmp` again if it has to
      writeWhole: options.holdSmall
        ? async (data) => {
            held = data;
          }
        : (data) => writeNewFile(tempPath, data),
    });
    let md5: string;
    try {
      await pipeline(source, sink, options.signal ? { signal: options.signal } : {});
      await sink.close();
      md5 = await sink.digest();
    } catch (error) {
      sink.abort();
      await sink.settled();
      await sink.close().catch(() => undefined);
      await fsp.rm(tempPath, { force: true }).catch(() => undefined);
      throw error;
    }
    return this.staged(tempPath, sink.size, md5, sink.head(), held);
  }

  /** Deletes a stored file; a missing file is not an error. */
  async remove(relativePath: string): Promise<void> {
    await fsp.rm(this.absolutePath(relativePath), { force: true });
  }

  async exists(relativePath: string): Promise<boolean> {
    try {
      await fsp.access(this.absolutePath(relativePath), fsConstants.F_OK);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Stats of a stored file, or undefined when it does not exist. */
  async stat(relativePath: string): Promise<Stats | undefined> {
    try {
      return await fsp.stat(this.absolutePath(relativePath));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Copies a stored file to a new path: temp copy, fsync, rename, fsync directory. */
  async copy(fromRelativePath: string, toRelativePath: string): Promise<void> {
    const from = this.absolutePath(fromRelativePath);
    this.absolutePath(toRelativePath); // validate before doing any work
    const tempPath = this.tempName();
    try {
      // FICLONE: a copy-on-write clone where the file system supports it, a plain copy otherwise.
      await fsp.copyFile(from, tempPath, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE);
      const handle = await fsp.open(tempPath, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.place(tempPath, toRelativePath);
    } catch (error) {
      await fsp.rm(tempPath, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  async checkWritable(): Promise<WritableCheck> {
    const probe = path.join(this.tempDir, `probe-${process.pid}-${randomBytes(6).toString('hex')}`);
    const payload = `probe ${new Date().toISOString()}`;
    try {
      await fsp.mkdir(this.tempDir, { recursive: true });
      await fsp.writeFile(probe, payload, { flag: 'wx', flush: true });
      const back = await fsp.readFile(probe, 'utf8');
      if (back !== payload) return { ok: false, message: `${this.root}: probe file read back differs` };
      return { ok: true, message: `${this.root} is writable` };
    } catch (error) {
      return { ok: false, message: `${this.root} is not writable: ${errorMessage(error)}` };
    } finally {
      await fsp.rm(probe, { force: true }).catch(() => undefined);
    }
  }

  // --- internals ---

  private tempName(): string {
    return path.join(this.tempDir, `${Date.now()}-${process.pid}-${randomBytes(8).toString('hex')}`);
  }

  /** Runs `create` (which makes a file in `.tmp`) again after re-making `.tmp` if it was missing. */
  private async inTempDirectory<T>(create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await fsp.mkdir(this.tempDir, { recursive: true });
      return create();
    }
  }

  /**
   * Renames a synced temp file to its final path and makes the new directory entries durable; with
   * `held` bytes, writes the temp file first, in the same worker call.
   */
  private async place(tempPath: string, relativePath: string, held?: Buffer): Promise<void> {
    const target = this.absolutePath(relativePath);
    const parent = path.dirname(target);
    // the fan-out directories soon all exist: the worker skips the mkdir for those seen (and makes one that went missing)
    const parentKnown = this.knownDirectories.has(parent);
    await (held ? writeAndPlaceFile(tempPath, held, target, parentKnown) : placeFile(tempPath, target, parentKnown));
    if (this.knownDirectories.size < 100_000) this.knownDirectories.add(parent);
  }

  private staged(tempPath: string, size: number, md5: string, head: Buffer, held: Buffer | undefined): StagedFile {
    let state: 'staged' | 'committing' | 'committed' | 'discarded' = 'staged';
    const discard = async () => {
      if (state !== 'staged') return;
      state = 'discarded';
      await fsp.rm(tempPath, { force: true });
    };
    return {
      tempPath,
      size,
      md5,
      head,
      commit: async (relativePath: string) => {
        if (state !== 'staged') throw new Error(`Cannot commit a staged file that is ${state}`);
        state = 'committing';
        try {
          await this.place(tempPath, relativePath, held);
          state = 'committed';
        } catch (error) {
          state = 'staged';
          // held bytes that went to the worker are not here any more (moved, not copied): nothing to retry
          if (held && held.byteLength !== size) await discard();
          throw error;
        }
      },
      discard,
    };
  }
}

/** How a sink makes its temp file: opened for streaming, or written whole (small uploads). */
interface TempFileTarget {
  open(): Promise<FileHandle>;
  writeWhole(data: Buffer): Promise<void>;
}

/**
 * Writable that writes to the temp file, hashes and counts in the same pass: the file write runs
 * in the libuv pool and MD5 in a worker thread (md5-hasher.ts), both overlapping the next read.
 * A batch is acknowledged once it is written and the hasher's backlog is small (backpressure).
 * The first WHOLE_WRITE_BYTES are held: an upload that ends within them is written with one call.
 */
class HashingFileSink extends Writable {
  size = 0;
  private readonly md5: Md5Job = createMd5Job();
  private readonly headParts: Buffer[] = [];
  private headLength = 0;
  private handle: FileHandle | undefined;
  /** the bytes so far while the upload is small; undefined once the file is open */
  private held: Buffer[] | undefined = [];
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly maxBytes: number,
    private readonly target: TempFileTarget,
  ) {
    super({ highWaterMark: SINK_BUFFER_BYTES });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeBatch([chunk], callback);
  }

  override _writev(
    chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void,
  ): void {
    this.writeBatch(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    const done = this.handle ? this.handle.sync() : this.target.writeWhole(this.wholeUpload());
    this.inFlight = done;
    done.then(() => callback(), callback);
  }

  /** Resolves once no file write is pending (so the handle can be closed). */
  async settled(): Promise<void> {
    await this.inFlight.catch(() => undefined);
  }

  /** Closes the temp file if it was opened for streaming. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  digest(): Promise<string> {
    return this.md5.digest();
  }

  abort(): void {
    this.md5.abort();
  }

  head(): Buffer {
    return Buffer.concat(this.headParts, this.headLength);
  }

  private writeBatch(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    let total = 0;
    for (const b of buffers) total += b.length;
    if (this.size + total > this.maxBytes) {
      callback(new TooLargeError(this.maxBytes));
      return;
    }
    const position = this.size;
    this.size += total;
    noteReceivedBytes(total);
    let write: Promise<void> | undefined;
    if (this.held && this.size <= WHOLE_WRITE_BYTES) {
      for (const b of buffers) this.held.push(Buffer.from(b)); // copy: the source may reuse its buffers
    } else {
      write = this.writeToFile(buffers, position);
      this.inFlight = write;
    }
    for (const b of buffers) {
      this.md5.update(b);
      if (this.headLength < HEAD_BYTES) {
        const part = Buffer.from(b.subarray(0, HEAD_BYTES - this.headLength)); // copy: don't pin b
        this.headParts.push(part);
        this.headLength += part.length;
      }
    }
    const waits = [write, this.md5.ready()].filter((wait) => wait !== undefined);
    if (waits.length === 0) callback();
    else Promise.all(waits).then(() => callback(), callback);
  }

  /** The held bytes in a buffer of its own, so that it moves to the durable-io worker instead of being copied. */
  private wholeUpload(): Buffer {
    const whole = Buffer.allocUnsafeSlow(this.size);
    let offset = 0;
    for (const part of this.held ?? []) offset += part.copy(whole, offset);
    return whole;
  }

  /** Writes at `position`, opening the file first (with the held bytes) when the upload outgrew them. */
  private async writeToFile(buffers: Buffer[], position: number): Promise<void> {
    if (!this.handle) {
      this.handle = await this.target.open();
      const held = this.held ?? [];
      this.held = undefined;
      await writeFully(this.handle, held, 0);
    }
    await writeFully(this.handle, buffers, position);
  }
}

async function writeFully(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let pending = buffers.filter((b) => b.length > 0);
  while (pending.length > 0) {
    const { bytesWritten } = pending.length === 1
      ? await handle.write(pending[0]!, 0, pending[0]!.length, position)
      : await handle.writev(pending, position);
    position += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const b of pending) {
      if (skip >= b.length) {
        skip -= b.length;
        continue;
      }
      rest.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
    if (rest.length > 0 && bytesWritten === 0) throw new Error('Short write: no progress writing to the file');
    pending = rest;
  }
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
