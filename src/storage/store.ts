/**
 * The store of content and cache bytes (DESIGN §14): one interface, two implementations — the file
 * system (file-store.ts, the default) and S3-compatible object storage (s3-store.ts).
 *
 * A stored file is named by its storage path `xx/yy/<id>` (`storagePathFor`), derived from the id of
 * its row only, the same in both stores: a migration between them (migrate.ts) copies path to path and
 * leaves the rows alone.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { noteReceivedBytes } from './garbage-pacer.js';
import { createMd5Job, type Md5Job } from './md5-hasher.js';

/** Bytes kept from the start of an upload for content sniffing. */
export const HEAD_BYTES = 4100;
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

/** A stored file is missing, or has another size than its row says. */
export class StoredFileUnavailableError extends Error {
  override name = 'StoredFileUnavailableError';
}

export interface ReceiveOptions {
  /** Reject with TooLargeError once more than this many bytes arrived. */
  maxBytes: number;
  /** Aborts the transfer (nothing is kept and the promise rejects with an AbortError). */
  signal?: AbortSignal;
  /**
   * An upload that ends small stays in memory until `commit`, which writes and places it in one
   * step (file system: one worker call). For a caller that records the upload between the two.
   */
  holdSmall?: boolean;
  /**
   * The storage path the bytes will be committed to, when known already and naming no stored file
   * yet (a new id): a store that cannot rename (S3) writes there at once instead of copying at commit.
   */
  destination?: string;
}

export interface StagedFile {
  readonly size: number;
  /** MD5 of the bytes, lowercase hex. */
  readonly md5: string;
  /** The first min(size, 4100) bytes, for sniffMimeType. */
  readonly head: Buffer;
  /** Places the bytes at `storagePath`, durably. */
  commit(storagePath: string): Promise<void>;
  /** Drops the bytes. A no-op after commit or a previous discard. */
  discard(): Promise<void>;
}

/** A staged file known by its size alone (ByteStore.stageSyncedFile). */
export type SyncedFile = Pick<StagedFile, 'size' | 'commit' | 'discard'>;

export interface WritableCheck {
  ok: boolean;
  message: string;
}

/** A stored file opened for reading, its size checked against its row's. */
export interface StoredFile {
  readonly size: number;
  /**
   * Sends bytes `start`..`end` (inclusive) to a response whose headers are written. Resolves when
   * everything was handed to the socket, or when the client went away (`complete` says which); a
   * failed read destroys the response and rejects.
   */
  send(res: ServerResponse, start: number, end: number): Promise<{ complete: boolean; bytes: number }>;
  /** The whole file as a stream (once). */
  stream(): Promise<Readable>;
  close(): Promise<void>;
}

export interface ByteStore {
  /** which implementation: the value of STORAGE_BACKEND that selects it */
  readonly kind: 'fs' | 's3';
  /** where the bytes are, for messages (a folder, or s3://bucket) */
  readonly location: string;
  init(): Promise<void>;
  /** Releases what `init` made in this process (S3: the scratch folder); the store is not used after. */
  close(): Promise<void>;
  /**
   * Removes uploads in progress that were left by a crash and started more than `olderThanMs` ago
   * (all with 0: only when this process alone uses the store). Returns how many went.
   */
  sweepTemporary(options?: { olderThanMs?: number }): Promise<number>;
  /** The committed files last written more than `olderThanMs` ago, in batches (for the sweep of files no row names). */
  committedFiles(olderThanMs: number, batchSize?: number): AsyncGenerator<string[]>;
  /** The storage path of the file for `id` (storagePathFor). */
  pathFor(id: string): string;
  /**
   * Streams `source` into the store, computing size, md5 and the head on the way. Rejects with
   * TooLargeError past `maxBytes`, or with the source's error; then nothing is kept. On failure the
   * source is destroyed (stream.pipeline semantics).
   */
  receive(source: Readable, options: ReceiveOptions): Promise<StagedFile>;
  /**
   * Stages a file of scratchDirectory() that its writer made durable (fsynced: a rendered page), for a
   * caller that needs no md5: the file system takes it as it is (its commit renames it into place, no
   * copy), S3 uploads it as `receive` does. The file is gone once committed or discarded.
   */
  stageSyncedFile(file: string): Promise<SyncedFile>;
  /** Deletes a stored file; a missing one is not an error. */
  remove(storagePath: string): Promise<void>;
  exists(storagePath: string): Promise<boolean>;
  /** Copies a stored file to a new path; StoredFileUnavailableError when it is missing. */
  copy(fromStoragePath: string, toStoragePath: string): Promise<void>;
  /** Opens a stored file of `expectedSize` bytes; StoredFileUnavailableError when it is missing or of another size. */
  open(storagePath: string, expectedSize: number): Promise<StoredFile>;
  /** Runs `use` with the path of a local file holding the stored bytes (a renderer or text reader needs one). */
  withLocalFile<T>(storagePath: string, use: (file: string) => Promise<T>): Promise<T>;
  /** A local folder for this process's temporary files (rendered pages before they are stored). */
  scratchDirectory(): string;
  /** Writes, reads back and removes a probe (the connection check's "storage writable"). */
  checkWritable(): Promise<WritableCheck>;
}

/**
 * The storage path of the file for `id`: `xx/yy/<id>`, where xx/yy are the first hex digits of
 * sha256(id) (an even fan-out whatever the id scheme). Derived from the id only. Throws
 * InvalidStoragePathError unless the id matches [A-Za-z0-9_-]{1,200}.
 */
export function storagePathFor(id: string): string {
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new InvalidStoragePathError(`Invalid storage id: ${JSON.stringify(String(id).slice(0, 80))}`);
  }
  const hash = createHash('sha256').update(id).digest('hex');
  return `${hash.slice(0, 2)}/${hash.slice(2, 4)}/${id}`;
}

/** The segments of a storage path, validated: no `..`, no `.tmp`, no absolute path. */
export function storagePathSegments(storagePath: string): string[] {
  if (typeof storagePath !== 'string' || storagePath.length === 0 || storagePath.length > 1024) {
    throw new InvalidStoragePathError('Invalid storage path');
  }
  const segments = storagePath.split('/');
  for (const segment of segments) {
    if (!SEGMENT_PATTERN.test(segment)) {
      throw new InvalidStoragePathError(`Invalid storage path: ${JSON.stringify(storagePath.slice(0, 200))}`);
    }
  }
  return segments;
}

/**
 * What an upload counts on the way, whatever it is written to: its size (against the limit), its
 * MD5 (in a worker thread, md5-hasher.ts) and its first bytes.
 */
export class UploadMeter {
  size = 0;
  private readonly md5: Md5Job = createMd5Job();
  private readonly headParts: Buffer[] = [];
  private headLength = 0;

  constructor(private readonly maxBytes: number) {
    if (!(maxBytes >= 0)) throw new RangeError('maxBytes must be a non-negative number');
  }

  /** Counts and hashes `buffers`; TooLargeError past the limit. Answers a promise to wait for before more (backpressure), if any. */
  add(buffers: Buffer[]): Promise<void> | undefined {
    let total = 0;
    for (const b of buffers) total += b.length;
    if (this.size + total > this.maxBytes) throw new TooLargeError(this.maxBytes);
    this.size += total;
    noteReceivedBytes(total);
    for (const b of buffers) {
      this.md5.update(b);
      if (this.headLength < HEAD_BYTES) {
        const part = Buffer.from(b.subarray(0, HEAD_BYTES - this.headLength)); // copy: don't pin b
        this.headParts.push(part);
        this.headLength += part.length;
      }
    }
    return this.md5.ready();
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
}

/**
 * The lifecycle of a staged file: commit once, discard unless committed. A failed commit may be
 * retried or discarded, unless `lostOnFailure` says the bytes are gone: then it is discarded.
 */
export function stagedFile<F extends { size: number }>(
  fields: F,
  place: (storagePath: string) => Promise<void>,
  drop: () => Promise<void>,
  lostOnFailure: () => boolean = () => false,
): F & SyncedFile {
  let state: 'staged' | 'committing' | 'committed' | 'discarded' = 'staged';
  const discard = async () => {
    if (state !== 'staged') return;
    state = 'discarded';
    await drop();
  };
  return {
    ...fields,
    commit: async (storagePath: string) => {
      if (state !== 'staged') throw new Error(`Cannot commit a staged file that is ${state}`);
      state = 'committing';
      try {
        await place(storagePath);
        state = 'committed';
      } catch (error) {
        state = 'staged';
        if (lostOnFailure()) await discard();
        throw error;
      }
    },
    discard,
  };
}

/** The items of `items` in arrays of up to `size`. */
export async function* inBatches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Runs `use` with local files holding several stored files (ByteStore.withLocalFile, nested). */
export function withLocalFiles<T>(store: ByteStore, storagePaths: string[], use: (files: string[]) => Promise<T>): Promise<T> {
  const next = (files: string[]): Promise<T> =>
    files.length === storagePaths.length ? use(files) : store.withLocalFile(storagePaths[files.length]!, (file) => next([...files, file]));
  return next([]);
}

/** The whole of a small stored file of `size` bytes (the deep check reads back what it stored). */
export async function readStored(store: ByteStore, storagePath: string, size: number): Promise<Buffer> {
  const file = await store.open(storagePath, size);
  try {
    return Buffer.concat(await (await file.stream()).toArray());
  } finally {
    await file.close();
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
