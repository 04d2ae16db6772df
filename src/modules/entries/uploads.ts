import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { illegalArguments, notFound, ServiceError } from '../../errors.js';
import { sniffMimeType } from '../../storage/mime.js';
import { TooLargeError } from '../../storage/file-store.js';
import { Resource } from './entry.entity.js';
import type { EntryScope } from './scope.js';

export interface UploadInput {
  source: Readable;
  fileName: string;
  mimeType?: string;
  /** the client's Content-Length of the whole request, when known: checked before reading */
  declaredLength?: number;
}

/**
 * Streams bytes into the content store and records them as a *pending* resource (the upload id). A
 * content takes it over in the same transaction that creates the entry (`claimUpload`), so a crash at
 * any point leaves either nothing visible or a pending resource that `sweepPendingUploads` removes.
 */
/** A pending resource as recorded (its id is the upload id). */
export type StagedUpload = Pick<Resource, 'id' | 'repositoryId' | 'name' | 'mimeType' | 'fileSize' | 'md5' | 'storagePath' | 'state' | 'createdAt' | 'creator'>;

export async function stageUpload(scope: EntryScope, input: UploadInput): Promise<StagedUpload> {
  const { contentStore, config } = scope.services;
  const maxBytes = config.MAX_UPLOAD_BYTES;
  if (input.declaredLength !== undefined && input.declaredLength > maxBytes + 64 * 1024) {
    input.source.resume();
    throw new ServiceError('tooLarge', `the upload is larger than the maximum of ${maxBytes} bytes`);
  }
  let staged;
  try {
    staged = await contentStore.receive(input.source, { maxBytes });
  } catch (error) {
    if (error instanceof TooLargeError) throw new ServiceError('tooLarge', `the upload is larger than the maximum of ${maxBytes} bytes`);
    throw error;
  }
  if (staged.size === 0) {
    await staged.discard();
    throw illegalArguments('file: the uploaded file is empty');
  }
  const id = randomUUID();
  const storagePath = contentStore.pathFor(id);
  const resource: StagedUpload = {
    id,
    repositoryId: scope.repository.id,
    name: input.fileName,
    mimeType: input.mimeType || sniffMimeType(staged.head, input.fileName),
    fileSize: staged.size,
    md5: staged.md5,
    storagePath,
    state: 'pending',
    createdAt: new Date(),
    creator: scope.principal.userName,
  };
  try {
    // the row first: bytes in place without a row could never be found again (one statement, no
    // unit of work: the upload is claimed by a later transaction)
    await scope.em.insert(Resource, resource);
    await staged.commit(storagePath);
  } catch (error) {
    await staged.discard();
    throw error;
  }
  return resource;
}

/**
 * Takes over the pending upload `uploadId` of this caller in this repository (one statement). Call it
 * inside the transaction that creates the version using it: a rollback leaves the upload pending.
 */
export async function claimUpload(scope: EntryScope, uploadId: string, mimeType?: string | null): Promise<Resource> {
  const [row] = await scope.em.execute<Record<string, unknown>[]>(
    `update resource set state = 'ready', mime_type = coalesce(?, mime_type)
      where id = ? and repository_id = ? and state = 'pending' and creator = ? returning *`,
    [mimeType || null, uploadId, scope.repository.id, scope.principal.userName],
  );
  if (!row) throw notFound(`upload '${uploadId}' not found (or already used)`);
  return scope.em.map(Resource, row);
}

/** Drops one pending upload and its bytes (its content could not be created). */
export async function discardUpload(em: EntityManager, services: Services, uploadId: string): Promise<void> {
  const rows = await em.getConnection().execute<{ storage_path: string }[]>(
    `delete from resource where id = ? and state = 'pending' returning storage_path`,
    [uploadId],
  );
  for (const row of rows) await services.contentStore.remove(row.storage_path);
}

/** Removes pending uploads older than `olderThanMs` (all of them at a single-process start) with their bytes. */
export async function sweepPendingUploads(em: EntityManager, services: Services, olderThanMs: number): Promise<number> {
  const rows = await em.getConnection().execute<{ id: string; storage_path: string }[]>(
    `delete from resource where state = 'pending' and created_at < now() - (? * interval '1 millisecond') returning id, storage_path`,
    [olderThanMs],
  );
  for (const row of rows) await services.contentStore.remove(row.storage_path);
  return rows.length;
}

/** Bytes no version refers to any more are deleted (after the rows that named them). */
export async function removeUnreferencedResources(scope: EntryScope, resourceIds: (string | null | undefined)[]): Promise<void> {
  const ids = [...new Set(resourceIds)].filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return;
  const rows = await scope.em.getConnection().execute<{ id: string; storage_path: string }[]>(
    `delete from resource r where r.id = any(array[?]::text[]) and r.state = 'ready'
       and not exists (select 1 from entry e where e.resource_id = r.id) returning id, storage_path`,
    [ids],
  );
  for (const row of rows) await scope.services.contentStore.remove(row.storage_path);
}
