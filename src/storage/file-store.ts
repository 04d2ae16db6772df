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
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { finished, Writable, type Readable } from 'node:stream';
import { placeFile, warmUpDurableIo, writeAndPlaceFile, writeNewFile } from './durable-io.js';
import { warmUpMd5Workers } from './md5-hasher.js';
import { sendFile } from './send-file.js';
import { errorMessage, inBatches, InvalidStoragePathError, stagedFile, StoredFileUnavailableError, storagePathFor, storagePathSegments, UploadMeter } from './store.js';
import type { ByteStore, ReceiveOptions, StagedFile, StoredFile, SyncedFile, WritableCheck } from './store.js';

/**
 * Buffer of the upload sink: larger than the source's chunks so that reading continues while a
 * batch is written and hashed (with 1 MiB the source stalls on every batch: -30 % throughput).
 */
const SINK_BUFFER_BYTES = 4 * 1024 * 1024;
/** Uploads up to this size are held in memory and written, fsynced and closed in one worker call. */
const WHOLE_WRITE_BYTES = 64 * 1024;
const TEMP_DIR = '.tmp';

/** A staged file of this store: its bytes wait in a temporary file. */
export interface StagedLocalFile extends StagedFile {
  /** Absolute path of the temporary file (inside `<root>/.tmp`). */
  readonly tempPath: string;
}

export class FileStore implements ByteStore {
  readonly kind = 'fs';
  readonly root: string;
  private readonly tempDir: string;
  /** directories this store made or found while placing files */
  private readonly knownDirectories = new Set<string>();

  constructor(root: string) {
    this.root = path.resolve(root);
    this.tempDir = path.join(this.root, TEMP_DIR);
  }

  get location(): string {
    return this.root;
  }

  /** Creates the root and its temp directory. */
  async init(): Promise<void> {
    await fsp.mkdir(this.tempDir, { recursive: true });
    warmUpMd5Workers();
    warmUpDurableIo();
  }

  /** Nothing to release: the scratch folder `.tmp` is the store's own, swept at start. */
  async close(): Promise<void> {}

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
  committedFiles(olderThanMs: number, batchSize = 1000): AsyncGenerator<string[]> {
    return inBatches(this.filesWrittenBefore(Date.now() - olderThanMs), batchSize);
  }

  pathFor(id: string): string {
    return storagePathFor(id);
  }

  /** Absolute path of a storage path (validated: no `..`, no `.tmp`, no absolute path). */
  absolutePath(relativePath: string): string {
    return path.join(this.root, ...storagePathSegments(relativePath));
  }

  /**
   * Streams `source` into a new temp file, computing size, md5 and the head in the same pass,
   * and fsyncs it. Rejects with TooLargeError past `maxBytes`, or with the source's error (client
   * disconnect); in both cases the temp file is removed. Note that on failure the source is
   * destroyed (stream.pipeline semantics).
   */
  async receive(source: Readable, options: ReceiveOptions): Promise<StagedLocalFile> {
    const meter = new UploadMeter(options.maxBytes);
    const tempPath = this.tempName();
    let held: Buffer | undefined;
    const sink = new HashingFileSink(meter, {
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
      await pipeInto(source, sink, options.signal);
      await sink.close();
      md5 = await meter.digest();
    } catch (error) {
      meter.abort();
      await sink.settled();
      await sink.close().catch(() => undefined);
      await fsp.rm(tempPath, { force: true }).catch(() => undefined);
      throw error;
    }
    return this.staged(tempPath, meter.size, md5, meter.head(), held);
  }

  /**
   * A synced file of `.tmp` (a rendered page in a folder there), committed by a rename and the
   * directory's fsync: no read, no copy, no md5. Anything else (outside `.tmp`, not a regular file:
   * a render process's message names it) is refused.
   */
  async stageSyncedFile(file: string): Promise<SyncedFile> {
    const relative = path.relative(this.tempDir, file);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) throw new InvalidStoragePathError(`${file} is not in ${this.tempDir}`);
    const stats = await fsp.lstat(file);
    if (!stats.isFile()) throw new InvalidStoragePathError(`${file} is not a regular file`);
    return stagedFile(
      { size: stats.size },
      (relativePath) => this.place(file, relativePath),
      () => fsp.rm(file, { force: true }),
    );
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
      throw isNotFound(error) ? new StoredFileUnavailableError('missing') : error;
    }
  }

  /** Opens a stored file for sending, its size checked before any header goes out (a missing or truncated file can still be answered properly). */
  async open(relativePath: string, expectedSize: number): Promise<StoredFile> {
    let file: FileHandle;
    try {
      file = await fsp.open(this.absolutePath(relativePath), 'r');
    } catch (error) {
      if (isNotFound(error)) throw new StoredFileUnavailableError('missing');
      throw error;
    }
    try {
      const { size } = await file.stat();
      if (size !== expectedSize) throw new StoredFileUnavailableError(`${size} bytes where ${expectedSize} were stored`);
    } catch (error) {
      await file.close();
      throw error;
    }
    return {
      size: expectedSize,
      send: (res, start, end) => sendFile(res, file, start, end),
      stream: async () => file.createReadStream({ autoClose: false, start: 0 }),
      close: () => file.close(),
    };
  }

  async withLocalFile<T>(relativePath: string, use: (file: string) => Promise<T>): Promise<T> {
    if (!(await this.exists(relativePath))) throw new StoredFileUnavailableError(`the stored file ${relativePath} is missing`);
    return use(this.absolutePath(relativePath));
  }

  /** `.tmp`: on the store's file system, and swept with it. */
  scratchDirectory(): string {
    return this.tempDir;
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

  private async *filesWrittenBefore(cutoff: number): AsyncGenerator<string> {
    const names = async (dir: string) => (await fsp.readdir(path.join(this.root, dir)).catch(() => [] as string[])).filter((name) => name !== TEMP_DIR);
    for (const first of await names('')) {
      for (const second of await names(first)) {
        for (const file of await names(path.join(first, second))) {
          const relative = `${first}/${second}/${file}`;
          const st = await fsp.lstat(path.join(this.root, relative)).catch(() => undefined);
          if (st?.isFile() && st.mtimeMs <= cutoff) yield relative;
        }
      }
    }
  }

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

  private staged(tempPath: string, size: number, md5: string, head: Buffer, held: Buffer | undefined): StagedLocalFile {
    const staged = stagedFile(
      { size, md5, head },
      (relativePath) => this.place(tempPath, relativePath, held),
      () => fsp.rm(tempPath, { force: true }),
      // held bytes that went to the worker are not here any more (moved, not copied): nothing to retry
      () => held !== undefined && held.byteLength !== size,
    );
    return { ...staged, tempPath };
  }
}

/** How a sink makes its temp file: opened for streaming, or written whole (small uploads). */
interface TempFileTarget {
  open(): Promise<FileHandle>;
  writeWhole(data: Buffer): Promise<void>;
}

/**
 * `source` piped into `sink` as `stream/promises`' pipeline does for two streams: settles once both
 * are done, rejects with the first error (the source's, the sink's, a premature close, the signal's
 * reason) and then destroys both. Not pipeline itself: it aborts an AbortController of its own each
 * time it finishes, and the AbortError made there (a DOMException with its stack) was ≈ 2 % of an
 * upload's node CPU (docs/benchmarks.md, "ingest — the upload's triggers and receive").
 */
function pipeInto(source: Readable, sink: Writable, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    let open = 2;
    const fail = (error: Error) => {
      if (failure) return;
      failure = error;
      source.destroy(error);
      sink.destroy(error);
    };
    const onAbort = () => fail(signal!.reason as Error);
    const done = (error?: Error | null) => {
      if (error) fail(error);
      if (--open > 0) return;
      signal?.removeEventListener('abort', onAbort);
      if (failure) reject(failure);
      else resolve();
    };
    finished(source, done);
    finished(sink, done);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    source.pipe(sink);
  });
}

/**
 * Writable that writes to the temp file, hashes and counts in the same pass: the file write runs
 * in the libuv pool and MD5 in a worker thread (UploadMeter), both overlapping the next read.
 * A batch is acknowledged once it is written and the hasher's backlog is small (backpressure).
 * The first WHOLE_WRITE_BYTES are held: an upload that ends within them is written with one call.
 */
class HashingFileSink extends Writable {
  private handle: FileHandle | undefined;
  /** the bytes so far while the upload is small; undefined once the file is open */
  private held: Buffer[] | undefined = [];
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly meter: UploadMeter,
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

  private writeBatch(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    const position = this.meter.size;
    let hashed: Promise<void> | undefined;
    try {
      hashed = this.meter.add(buffers);
    } catch (error) {
      callback(error as Error);
      return;
    }
    let write: Promise<void> | undefined;
    if (this.held && this.meter.size <= WHOLE_WRITE_BYTES) {
      for (const b of buffers) this.held.push(Buffer.from(b)); // copy: the source may reuse its buffers
    } else {
      write = this.writeToFile(buffers, position);
      this.inFlight = write;
    }
    const waits = [write, hashed].filter((wait) => wait !== undefined);
    if (waits.length === 0) callback();
    else Promise.all(waits).then(() => callback(), callback);
  }

  /** The held bytes in a buffer of its own, so that it moves to the durable-io worker instead of being copied. */
  private wholeUpload(): Buffer {
    const whole = Buffer.allocUnsafeSlow(this.meter.size);
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

