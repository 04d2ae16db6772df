/**
 * The content and cache stores of a process, as its configuration selects them (DESIGN §14), and the
 * read fallback of a migration between stores (migrate.ts): while a migration to this process's store
 * is under way and its switch not recorded, a file missing here is read from the other store.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config.js';
import { FileStore } from './file-store.js';
import { createS3Client, S3Store } from './s3-store.js';
import { StoredFileUnavailableError, type ByteStore, type ReceiveOptions, type StagedFile, type StoredFile, type SyncedFile, type WritableCheck } from './store.js';

export interface Stores {
  contentStore: ByteStore;
  cacheStore: ByteStore;
}

/** The stores of one backend, as configured (not initialised). */
export function storesOf(config: Config, backend: 'fs' | 's3', client?: S3Client): Stores {
  if (backend === 'fs') return { contentStore: new FileStore(config.contentStoragePath), cacheStore: new FileStore(config.cacheStoragePath) };
  if (!config.s3) throw new Error('S3 storage is not configured (S3_BUCKET, S3_CACHE_BUCKET)');
  const s3 = client ?? createS3Client(config.s3);
  return { contentStore: new S3Store(s3, config.s3.bucket), cacheStore: new S3Store(s3, config.s3.cacheBucket) };
}

/** The other backend of a migration to `backend`, when it is configured (the file system always is). */
export function otherBackend(config: Config, backend: 'fs' | 's3'): 'fs' | 's3' | undefined {
  if (backend === 's3') return 'fs';
  return config.s3 ? 's3' : undefined;
}

/**
 * The configured stores, initialised. `migrating` answers whether a migration to the configured
 * backend is recorded and not switched yet (asked when a read misses): then reads fall back to the
 * other backend's stores.
 */
export async function openStores(config: Config, migrating: () => Promise<boolean>): Promise<Stores> {
  const primary = storesOf(config, config.storageBackend);
  try {
    // one after the other: a start that fails names the content bucket first, whatever answers faster
    await primary.contentStore.init();
    await primary.cacheStore.init();
  } catch (error) {
    await closeStores(primary).catch(() => undefined);
    throw error;
  }
  const other = otherBackend(config, config.storageBackend);
  if (!other) return primary;
  const secondary = storesOf(config, other);
  let initialised: Promise<unknown> | undefined;
  const fallback = async () => {
    if (!(await migrating())) return false;
    await (initialised ??= Promise.all([secondary.contentStore.init(), secondary.cacheStore.init()]));
    return true;
  };
  return {
    contentStore: new FallbackStore(primary.contentStore, secondary.contentStore, fallback),
    cacheStore: new FallbackStore(primary.cacheStore, secondary.cacheStore, fallback),
  };
}

/** Releases what the stores' `init` made (S3: their scratch folders); nothing for a store never initialised. */
export async function closeStores(stores: Stores): Promise<void> {
  await Promise.all([stores.contentStore.close(), stores.cacheStore.close()]);
}

/**
 * Writes go to `primary`; a read of a file missing there goes to `secondary` while `fallback()` says
 * so (a migration from it is under way). Removals reach both then: a file deleted here must not come
 * back from the other store.
 */
export class FallbackStore implements ByteStore {
  constructor(
    readonly primary: ByteStore,
    readonly secondary: ByteStore,
    private readonly fallback: () => Promise<boolean>,
  ) {}

  get kind() {
    return this.primary.kind;
  }

  get location() {
    return this.primary.location;
  }

  init(): Promise<void> {
    return this.primary.init();
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.secondary.close()]);
  }

  sweepTemporary(options?: { olderThanMs?: number }): Promise<number> {
    return this.primary.sweepTemporary(options);
  }

  committedFiles(olderThanMs: number, batchSize?: number): AsyncGenerator<string[]> {
    return this.primary.committedFiles(olderThanMs, batchSize);
  }

  pathFor(id: string): string {
    return this.primary.pathFor(id);
  }

  receive(source: Readable, options: ReceiveOptions): Promise<StagedFile> {
    return this.primary.receive(source, options);
  }

  stageSyncedFile(file: string): Promise<SyncedFile> {
    return this.primary.stageSyncedFile(file);
  }

  async remove(storagePath: string): Promise<void> {
    await this.primary.remove(storagePath);
    if (await this.fallback()) await this.secondary.remove(storagePath);
  }

  async exists(storagePath: string): Promise<boolean> {
    return (await this.primary.exists(storagePath)) || ((await this.fallback()) && this.secondary.exists(storagePath));
  }

  /** A file still in the other store is copied across: the copy is a new file, written here. */
  async copy(fromStoragePath: string, toStoragePath: string): Promise<void> {
    try {
      await this.primary.copy(fromStoragePath, toStoragePath);
    } catch (error) {
      if (!(error instanceof StoredFileUnavailableError) || !(await this.fallback())) throw error;
      await this.secondary.withLocalFile(fromStoragePath, async (file) => {
        const staged = await this.primary.receive(createReadStream(file), { maxBytes: Number.MAX_SAFE_INTEGER, destination: toStoragePath });
        await staged.commit(toStoragePath);
      });
    }
  }

  open(storagePath: string, expectedSize: number): Promise<StoredFile> {
    return this.read((store) => store.open(storagePath, expectedSize));
  }

  withLocalFile<T>(storagePath: string, use: (file: string) => Promise<T>): Promise<T> {
    return this.read((store) => store.withLocalFile(storagePath, use));
  }

  scratchDirectory(): string {
    return this.primary.scratchDirectory();
  }

  checkWritable(): Promise<WritableCheck> {
    return this.primary.checkWritable();
  }

  private async read<T>(attempt: (store: ByteStore) => Promise<T>): Promise<T> {
    try {
      return await attempt(this.primary);
    } catch (error) {
      if (!(error instanceof StoredFileUnavailableError) || !(await this.fallback())) throw error;
      return attempt(this.secondary);
    }
  }
}

/**
 * Copies a stored file of `size` bytes from one store to another (the same storage path or another),
 * its MD5 computed on the way, and answers that MD5. Nothing is kept at the target when it fails.
 */
export async function transferFile(from: ByteStore, fromStoragePath: string, size: number, to: ByteStore, toStoragePath: string): Promise<string> {
  const file = await from.open(fromStoragePath, size);
  try {
    const staged = await to.receive(await file.stream(), { maxBytes: size, destination: toStoragePath });
    try {
      await staged.commit(toStoragePath);
    } finally {
      await staged.discard();
    }
    return staged.md5;
  } finally {
    await file.close();
  }
}
