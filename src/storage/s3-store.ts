/**
 * S3-compatible object store of content or cache bytes (DESIGN §14), one bucket per area.
 *
 * Keys are the storage paths (`xx/yy/<id>`, store.ts), derived from ids only. An upload streams
 * through an UploadMeter (size, md5, head on the way) into `putStream`: one PutObject when small, a
 * multipart upload otherwise (MULTIPART_UPLOAD: at most `queueSize` parts in flight), aborted on
 * failure, so a failed upload leaves no parts and no object.
 * Uploads whose key is not known yet (a page image that may replace another) go to `.tmp/<name>`
 * and are copied into place at commit; an object is durable once S3 answered its upload.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  type CompletedPart,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { ConfigError } from '../config.js';
import { makeTempFolder, removeTempFolder } from '../temp-folders.js';
import { noteReceivedBytes } from './garbage-pacer.js';
import { warmUpMd5Workers } from './md5-hasher.js';
import { errorMessage, inBatches, stagedFile, StoredFileUnavailableError, storagePathFor, storagePathSegments, UploadMeter } from './store.js';
import type { ByteStore, ReceiveOptions, StagedFile, StoredFile, SyncedFile, WritableCheck } from './store.js';

/**
 * Multipart uploads: parts of S3's minimum size (5 MiB), two uploaded at once (and held in memory at most,
 * with the one being filled). Measured with `npm run bench -- transfer` (docs/benchmarks.md): four 8 MiB
 * parts at once grew the service's RSS by 69 MiB over a large upload, over the 64 MiB target.
 */
export const MULTIPART_UPLOAD = { partSize: 5 * 1024 * 1024, queueSize: 2 } as const;
/** The largest object one CopyObject copies; larger ones are streamed through this process. */
const MAX_COPY_OBJECT_BYTES = 5 * 1024 ** 3;
const TEMP_PREFIX = '.tmp/';

export interface S3Settings {
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

/** One client for both buckets (credentials from the settings, else the SDK's default chain). */
export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.accessKeyId && settings.secretAccessKey ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
  });
}

/** The bucket cannot be used (missing, refused, unreachable): a startup error naming it. */
export class S3StoreUnavailableError extends ConfigError {
  override name = 'S3StoreUnavailableError';
}

export class S3Store implements ByteStore {
  readonly kind = 's3';
  private scratch: string | undefined;

  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
  ) {}

  get location(): string {
    return `s3://${this.bucket}`;
  }

  /** Checks that the bucket answers (a clear startup error otherwise) and makes this process's scratch folder. */
  async init(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      throw new S3StoreUnavailableError(`S3 bucket '${this.bucket}' cannot be used: ${describe(error)}`);
    }
    this.scratch ??= await makeTempFolder(`crs-s3-${this.bucket}-`);
    warmUpMd5Workers();
  }

  /** Removes this process's scratch folder with what is left in it. */
  async close(): Promise<void> {
    const scratch = this.scratch;
    this.scratch = undefined;
    if (scratch) await removeTempFolder(scratch);
  }

  /** Temporary objects and multipart uploads started before the cutoff (S3 services without ListMultipartUploads: their lifecycle rule does it, docs/deployment.md). */
  async sweepTemporary(options: { olderThanMs?: number } = {}): Promise<number> {
    const cutoff = Date.now() - (options.olderThanMs ?? 0);
    let removed = 0;
    for await (const object of this.objects(TEMP_PREFIX)) {
      if (object.lastModified.getTime() > cutoff) continue;
      await this.deleteKey(object.key);
      removed++;
    }
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
        for (const upload of page.Uploads ?? []) {
          if (!upload.Key || !upload.UploadId || (upload.Initiated?.getTime() ?? 0) > cutoff) continue;
          await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
          removed++;
        }
        ({ NextKeyMarker: keyMarker, NextUploadIdMarker: uploadIdMarker } = page.IsTruncated ? page : { NextKeyMarker: undefined, NextUploadIdMarker: undefined });
      } while (keyMarker);
    } catch (error) {
      if (!(error instanceof S3ServiceException && error.name === 'NotImplemented')) throw error;
    }
    return removed;
  }

  committedFiles(olderThanMs: number, batchSize = 1000): AsyncGenerator<string[]> {
    return inBatches(this.keysWrittenBefore(Date.now() - olderThanMs), batchSize);
  }

  pathFor(id: string): string {
    return storagePathFor(id);
  }

  async receive(source: Readable, options: ReceiveOptions): Promise<StagedFile> {
    const meter = new UploadMeter(options.maxBytes);
    const key = options.destination === undefined ? this.tempKey() : keyOf(options.destination);
    let md5: string | undefined;
    try {
      if (options.signal) addAbortSignal(options.signal, source);
      await this.putStream(key, metered(source, meter));
      md5 = await meter.digest();
    } catch (error) {
      meter.abort();
      source.destroy();
      // an upload completed before the hash failed: nothing stays
      await this.deleteKey(key).catch(() => undefined);
      throw error;
    }
    return stagedFile(
      { size: meter.size, md5, head: meter.head() },
      async (storagePath) => {
        const target = keyOf(storagePath);
        if (target === key) return;
        await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: target, CopySource: copySource(this.bucket, key) }));
        await this.deleteKey(key);
      },
      () => this.deleteKey(key),
    );
  }

  /** Uploads the local file as `receive` does (to a temporary key, copied at commit); the local file goes once uploaded. */
  async stageSyncedFile(file: string): Promise<SyncedFile> {
    const staged = await this.receive(createReadStream(file), { maxBytes: Number.MAX_SAFE_INTEGER });
    await fsp.rm(file, { force: true });
    return staged;
  }

  async remove(storagePath: string): Promise<void> {
    await this.deleteKey(keyOf(storagePath));
  }

  async exists(storagePath: string): Promise<boolean> {
    return (await this.sizeOf(keyOf(storagePath))) !== undefined;
  }

  async copy(fromStoragePath: string, toStoragePath: string): Promise<void> {
    const from = keyOf(fromStoragePath);
    const to = keyOf(toStoragePath);
    const size = await this.sizeOf(from);
    if (size === undefined) throw new StoredFileUnavailableError('missing');
    if (size <= MAX_COPY_OBJECT_BYTES) {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: copySource(this.bucket, from) }));
      return;
    }
    await this.putStream(to, await this.body(from));
  }

  async open(storagePath: string, expectedSize: number): Promise<StoredFile> {
    const key = keyOf(storagePath);
    const size = await this.sizeOf(key);
    if (size === undefined) throw new StoredFileUnavailableError('missing');
    if (size !== expectedSize) throw new StoredFileUnavailableError(`${size} bytes where ${expectedSize} were stored`);
    return {
      size,
      send: (res, start, end) => this.send(res, key, start, end),
      stream: () => this.body(key),
      close: async () => undefined,
    };
  }

  async withLocalFile<T>(storagePath: string, use: (file: string) => Promise<T>): Promise<T> {
    const key = keyOf(storagePath);
    const file = path.join(this.scratchDirectory(), `local-${randomBytes(8).toString('hex')}`);
    try {
      await pipeline(await this.body(key), createWriteStream(file, { flags: 'wx' }));
      return await use(file);
    } finally {
      await fsp.rm(file, { force: true });
    }
  }

  scratchDirectory(): string {
    if (!this.scratch) throw new Error('S3Store.init was not called');
    return this.scratch;
  }

  async checkWritable(): Promise<WritableCheck> {
    const key = `${TEMP_PREFIX}probe-${process.pid}-${randomBytes(6).toString('hex')}`;
    const payload = `probe ${new Date().toISOString()}`;
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: payload }));
      const back = await (await this.body(key)).toArray();
      if (Buffer.concat(back).toString('utf8') !== payload) return { ok: false, message: `${this.location}: probe object read back differs` };
      return { ok: true, message: `${this.location} is writable` };
    } catch (error) {
      return { ok: false, message: `${this.location} is not writable: ${describe(error)}` };
    } finally {
      await this.deleteKey(key).catch(() => undefined);
    }
  }

  // --- internals ---

  /**
   * Stores the bytes under `key`: one PutObject when they fit in a part, else a multipart upload of
   * MULTIPART_UPLOAD.partSize parts, `queueSize` at most in flight. The parts are filled in buffers
   * that are used again (spareParts) — a fresh buffer per part lived as long as its upload, so it
   * was promoted and only a full collection freed it (one every 32 MiB sent kept the service's RSS
   * within bounds and was ≈ 30 % of its CPU per MiB, docs/benchmarks.md). On any failure the
   * multipart upload is aborted once no part is in flight: no part and no object stay.
   */
  private async putStream(key: string, chunks: AsyncIterable<Buffer>): Promise<void> {
    const { partSize, queueSize } = MULTIPART_UPLOAD;
    let part = takePartBuffer();
    let filled = 0;
    let uploadId: string | undefined;
    let checksummed = false;
    let partNumber = 0;
    const parts: CompletedPart[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    const sendPart = (buffer: Buffer, length: number) => {
      const PartNumber = ++partNumber;
      const sent = this.client
        .send(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: buffer.subarray(0, length) }))
        .then((answer) => {
          if (!answer.ETag) throw new Error(`S3 answered part ${PartNumber} without an ETag`);
          parts.push({ PartNumber, ETag: answer.ETag, ...(checksummed && answer.ChecksumCRC32 ? { ChecksumCRC32: answer.ChecksumCRC32 } : {}) });
          releasePartBuffer(buffer);
        })
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(sent));
      inFlight.add(sent);
    };
    try {
      for await (const chunk of chunks) {
        let offset = 0;
        while (offset < chunk.length) {
          if (filled === partSize) {
            if (uploadId === undefined) {
              // as lib-storage does: the parts' CRC32 (computed by the client) named at the start
              checksummed = (await this.client.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED';
              const started = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ...(checksummed ? { ChecksumAlgorithm: 'CRC32' } : {}) }));
              if (!started.UploadId) throw new Error('S3 started a multipart upload without an id');
              uploadId = started.UploadId;
            }
            sendPart(part, filled);
            while (inFlight.size >= queueSize) await Promise.race(inFlight);
            if (failure) throw failure.error;
            part = takePartBuffer();
            filled = 0;
          }
          const copied = chunk.copy(part, filled, offset);
          filled += copied;
          offset += copied;
        }
      }
      if (uploadId === undefined) {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: part.subarray(0, filled), ContentLength: filled }));
        releasePartBuffer(part);
        return;
      }
      if (filled > 0) sendPart(part, filled);
      await Promise.all(inFlight);
      if (failure) throw failure.error;
      parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    } catch (error) {
      await Promise.all(inFlight);
      if (uploadId !== undefined) await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      throw error;
    }
  }

  private async *keysWrittenBefore(cutoff: number): AsyncGenerator<string> {
    for await (const object of this.objects('')) {
      if (!object.key.startsWith(TEMP_PREFIX) && object.lastModified.getTime() <= cutoff) yield object.key;
    }
  }

  private tempKey(): string {
    return `${TEMP_PREFIX}${Date.now()}-${process.pid}-${randomBytes(8).toString('hex')}`;
  }

  private async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** The object's size, or undefined when there is none. */
  private async sizeOf(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  private async body(key: string, range?: string): Promise<Readable> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: range } : {}) }));
      return object.Body as Readable;
    } catch (error) {
      if (isMissing(error)) throw new StoredFileUnavailableError(`the stored object ${key} is missing`);
      throw error;
    }
  }

  private async send(res: ServerResponse, key: string, start: number, end: number): Promise<{ complete: boolean; bytes: number }> {
    let clientGone = false;
    const onClose = () => {
      if (!res.writableFinished) clientGone = true;
    };
    res.once('close', onClose);
    let bytes = 0;
    try {
      if (end >= start) {
        const body = await this.body(key, `bytes=${start}-${end}`);
        body.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          // each chunk from S3 is a fresh buffer, garbage once written: collected early, as an upload's
          noteReceivedBytes(chunk.length);
        });
        await pipeline(body, res);
        if (bytes !== end - start + 1) throw new StoredFileUnavailableError(`ended at byte ${start + bytes}, before ${end + 1}`);
      } else {
        await new Promise<void>((resolve) => res.end(resolve));
      }
      return { complete: true, bytes };
    } catch (error) {
      if (clientGone) return { complete: false, bytes };
      res.destroy(error as Error);
      throw error;
    } finally {
      res.off('close', onClose);
    }
  }

  /** The objects under `prefix`, page by page. */
  private async *objects(prefix: string): AsyncGenerator<{ key: string; lastModified: Date }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix || undefined, ContinuationToken: token }));
      for (const object of page.Contents ?? []) if (object.Key) yield { key: object.Key, lastModified: object.LastModified ?? new Date(0) };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

/** The source's bytes after counting and hashing them (UploadMeter), waiting for the hasher's backlog before taking more. */
async function* metered(source: Readable, meter: UploadMeter): AsyncGenerator<Buffer> {
  for await (const chunk of source as AsyncIterable<Buffer>) {
    const hashed = meter.add([chunk]);
    yield chunk;
    if (hashed) await hashed;
  }
}

/**
 * Part buffers no upload uses: taken by the next one. As many as the parts one upload holds at
 * once; more uploads at once allocate more, and those are dropped when they finish.
 */
const spareParts: Buffer[] = [];

function takePartBuffer(): Buffer {
  return spareParts.pop() ?? Buffer.allocUnsafeSlow(MULTIPART_UPLOAD.partSize);
}

function releasePartBuffer(buffer: Buffer): void {
  if (spareParts.length <= MULTIPART_UPLOAD.queueSize) spareParts.push(buffer);
}

/** The key of a storage path (validated as in the file store: the same names in both). */
function keyOf(storagePath: string): string {
  return storagePathSegments(storagePath).join('/');
}

function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata?.httpStatusCode === 404);
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException) return `${error.name} (HTTP ${error.$metadata?.httpStatusCode ?? '?'})${error.message && error.message !== error.name ? `: ${error.message}` : ''}`;
  return errorMessage(error);
}
