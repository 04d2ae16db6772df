/**
 * S3-compatible object store of content or cache bytes (DESIGN §14), one bucket per area.
 *
 * Keys are the storage paths (`xx/yy/<id>`, store.ts), derived from ids only. An upload streams
 * through an UploadMeter (size, md5, head on the way) into a lib-storage Upload: one PutObject when
 * small, a multipart upload otherwise (MULTIPART_UPLOAD: at most `queueSize` parts in memory), and
 * aborted on failure (leavePartsOnError false), so a failed upload leaves no parts and no object.
 * Uploads whose key is not known yet (a page image that may replace another) go to `.tmp/<name>`
 * and are copied into place at commit; an object is durable once S3 answered its upload.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ConfigError } from '../config.js';
import { makeTempFolder, removeTempFolder } from '../temp-folders.js';
import { noteReceivedBytes, noteSentParts } from './garbage-pacer.js';
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
    const metered = new MeteredStream(meter);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: metered },
      ...MULTIPART_UPLOAD,
      leavePartsOnError: false,
    });
    let partsSent = 0;
    upload.on('httpUploadProgress', ({ loaded }) => {
      if (loaded === undefined || loaded <= partsSent) return;
      noteSentParts(loaded - partsSent);
      partsSent = loaded;
    });
    // a failed upload stops the reading too (nobody would take the bytes any more)
    const uploaded = upload.done().catch((error: unknown) => {
      metered.destroy(error as Error);
      throw error;
    });
    const [read, sent] = await Promise.allSettled([pipeline(source, metered, options.signal ? { signal: options.signal } : {}), uploaded]);
    let md5: string | undefined;
    if (read.status === 'fulfilled' && sent.status === 'fulfilled') md5 = await meter.digest().catch(() => undefined);
    if (md5 === undefined) {
      meter.abort();
      await upload.abort().catch(() => undefined);
      // an upload completed just before another part failed: nothing stays
      await this.deleteKey(key).catch(() => undefined);
      throw read.status === 'rejected' ? read.reason : sent.status === 'rejected' ? sent.reason : new Error('the upload could not be hashed');
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
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: to, Body: await this.body(from) }, ...MULTIPART_UPLOAD, leavePartsOnError: false });
    await upload.done();
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

/**
 * Passes an upload's bytes on to the Upload after counting and hashing them (UploadMeter), waiting
 * for the hasher's backlog (backpressure) before taking more.
 */
class MeteredStream extends Transform {
  constructor(private readonly meter: UploadMeter) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let hashed: Promise<void> | undefined;
    try {
      hashed = this.meter.add([chunk]);
    } catch (error) {
      callback(error as Error);
      return;
    }
    this.push(chunk);
    if (hashed) hashed.then(() => callback(), callback);
    else callback();
  }
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
