import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { missingRows } from '../../db/missing-rows.js';
import { executePrepared } from '../../db/prepared.js';
import { isTransientConflict, notFound, ServiceError } from '../../errors.js';
import { sniffMimeType } from '../../storage/mime.js';
import { TooLargeError, type StagedFile } from '../../storage/store.js';
import { hasPdfMark } from '../../text/extract.js';
import { retryingTransientConflicts } from './chronicles.js';
import { Resource } from './entry.entity.js';
import { optionalMediaType } from './media-types.js';
import { asResourceName } from './names.js';
import type { EntryScope } from './scope.js';

export interface UploadInput {
  source: Readable;
  fileName: string;
  mimeType?: string;
  /** the file's length as the client declared it (a raw body's Content-Length), when known: checked before reading */
  declaredLength?: number;
}

/** A pending resource as recorded (its id is the upload id). */
export type StagedUpload = Pick<Resource, 'id' | 'repositoryId' | 'name' | 'mimeType' | 'fileSize' | 'md5' | 'storagePath' | 'state' | 'createdAt' | 'creator'>;

const tooLarge = (maxBytes: number) => new ServiceError('tooLarge', `the upload is larger than the maximum of ${maxBytes} bytes`);

/** Room for a multipart body's boundaries, part headers and text fields around the file. */
const multipartOverheadBytes = 64 * 1024;

/** The longest body an upload may send: the largest file, and for a multipart body its envelope around it. */
export const maxUploadBodyBytes = (config: Pick<Services['config'], 'MAX_UPLOAD_BYTES'>, multipart: boolean) =>
  config.MAX_UPLOAD_BYTES + (multipart ? multipartOverheadBytes : 0);

/** Whether a body that says it is `declaredLength` bytes long is larger than any upload may be. */
const declaredTooLarge = (config: Pick<Services['config'], 'MAX_UPLOAD_BYTES'>, declaredLength: number | undefined, multipart: boolean) =>
  declaredLength !== undefined && declaredLength > maxUploadBodyBytes(config, multipart);

/** A multipart upload whose declared length is too large, refused before a byte of it is read. */
export function refuseDeclaredMultipartLength(config: Pick<Services['config'], 'MAX_UPLOAD_BYTES'>, declaredLength: number | undefined): void {
  if (declaredTooLarge(config, declaredLength, true)) throw tooLarge(config.MAX_UPLOAD_BYTES);
}

export interface StageOptions {
  /**
   * The same request claims the upload (a REST check-in or replace): the pending row's commit
   * does not wait for its WAL to reach the disk (`synchronous_commit` off for that one transaction). The
   * claim's own commit flushes the WAL past it; a crash before the claim fails the request and can lose
   * only this pending row, and bytes placed by then are removed by `sweepUnreferencedFiles`. One WAL
   * flush fewer per upload: −0.3 ms of Postgres CPU and −5 to −15 ms of latency (docs/benchmarks.md).
   * An upload staged for a later request (`POST C/uploads`) keeps its commit durable.
   */
  claimedInThisRequest?: boolean;
}

const pendingColumns = 'insert into resource (id, repository_id, name, mime_type, file_size, md5, storage_path, state, created_at, creator)';

/**
 * Records bytes about to be placed in the content store as a *pending* resource of the caller (one
 * insert, no unit of work). The row comes first: bytes in place without a row could never be found
 * again, while a pending row without bytes is swept like any abandoned upload.
 */
export async function insertPendingResource(
  scope: EntryScope,
  fields: Pick<Resource, 'name' | 'mimeType' | 'fileSize' | 'md5'>,
  id: string = randomUUID(),
  { claimedInThisRequest = false }: StageOptions = {},
): Promise<StagedUpload> {
  const resource: StagedUpload = {
    ...fields,
    id,
    repositoryId: scope.repository.id,
    storagePath: scope.services.contentStore.pathFor(id),
    state: 'pending',
    createdAt: new Date(),
    creator: scope.principal.userName,
  };
  // inside a caller's transaction the setting would reach that transaction's commit: durable there
  const unflushed = claimedInThisRequest && !scope.em.isInTransaction();
  await executePrepared(
    scope.em,
    unflushed ? 'insert-pending-resource-unflushed' : 'insert-pending-resource',
    unflushed
      ? `${pendingColumns} select ?, ?, ?, ?, ?::bigint, ?, ?, ?, ?::timestamptz, ? from (select set_config('synchronous_commit', 'off', true)) unflushed`
      : `${pendingColumns} values (?, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?)`,
    [id, resource.repositoryId, resource.name, resource.mimeType, resource.fileSize, resource.md5, resource.storagePath, resource.state, resource.createdAt.toISOString(), resource.creator],
  );
  return resource;
}

/**
 * An upload's bytes received (small ones held in memory, larger ones in a temporary file), neither
 * placed in the content store nor recorded: a verb writes them with its version's row
 * (`createContent` with `received`), or `stageUpload` records them as a pending upload.
 */
export interface ReceivedBytes extends Pick<Resource, 'id' | 'name' | 'mimeType' | 'fileSize' | 'md5' | 'storagePath'> {
  file: StagedFile;
}

/** Receives an upload's bytes (size, md5, sniffed type) under a new resource id; `discardReceived` drops them unless a verb placed them. */
export async function receiveUpload(scope: EntryScope, input: UploadInput): Promise<ReceivedBytes> {
  const { contentStore, config } = scope.services;
  const maxBytes = config.MAX_UPLOAD_BYTES;
  // refused before reading: the bytes are drained, so that the client gets the answer
  const refuse = (error: unknown) => {
    input.source.resume();
    return error;
  };
  let mimeType: string | undefined;
  try {
    mimeType = optionalMediaType(input.mimeType, 'Content-Type');
  } catch (error) {
    throw refuse(error);
  }
  if (declaredTooLarge(config, input.declaredLength, false)) throw refuse(tooLarge(maxBytes));
  let file;
  // the id comes first: a store that cannot rename (S3) writes the bytes where they stay
  const id = randomUUID();
  const storagePath = contentStore.pathFor(id);
  try {
    // a small upload's bytes wait in memory for their row: then written and placed in one worker call
    file = await contentStore.receive(input.source, { maxBytes, holdSmall: true, destination: storagePath });
  } catch (error) {
    throw error instanceof TooLargeError ? tooLarge(maxBytes) : error;
  }
  try {
    const name = asResourceName(input.fileName);
    return { id, name, mimeType: mimeType ?? (await sniffMimeType(file.head, input.fileName)), fileSize: file.size, md5: file.md5, storagePath, file };
  } catch (error) {
    await file.discard();
    throw error;
  }
}

/** Drops received bytes that no verb placed (a no-op once placed: the verb that placed them removes them if its row fails). */
export const discardReceived = (received: ReceivedBytes): Promise<void> => received.file.discard();

/**
 * Streams bytes into the content store as a pending resource (the upload id). A content takes it
 * over in the transaction that creates its version (`claimUpload`), so a crash at any point leaves
 * either nothing visible or a pending resource that `sweepPendingUploads` removes.
 */
export async function stageUpload(scope: EntryScope, input: UploadInput, options: StageOptions = {}): Promise<StagedUpload> {
  const received = await receiveUpload(scope, input);
  try {
    const { name, mimeType, fileSize, md5 } = received;
    const resource = await insertPendingResource(scope, { name, mimeType, fileSize, md5 }, received.id, options);
    await received.file.commit(resource.storagePath);
    return resource;
  } catch (error) {
    await discardReceived(received);
    throw error;
  }
}

/**
 * Common table expressions that take over a pending upload of the caller (parameters: claimParameters):
 * `claimed` is the resource row, or none when there is no such pending upload; `queued` puts it in
 * the text extraction queue when the repository indexes full text — in the claim's own statement, so
 * the extraction is as durable as the version (docs/search.md, extraction).
 */
const queuedExpression = `queued as (
    insert into text_extraction_queue (resource_id, repository_id, uploader, pdf_mark) select id, repository_id, creator, ?::boolean from claimed where ?::boolean)`;

export const claimExpressions = `claimed as (
    update resource set state = 'ready', mime_type = coalesce(?, mime_type)
     where id = ? and repository_id = ? and state = 'pending' and creator = ? returning *),
  ${queuedExpression}`;

// the upload's first bytes are not at hand here: the extraction reads them from the file (pdf_mark null)
export const claimParameters = (scope: EntryScope, uploadId: string, mimeType?: string | null) =>
  [mimeType || null, uploadId, scope.repository.id, scope.principal.userName, null, scope.repository.fullTextEnabled];

/**
 * The same two expressions over bytes this request received and placed (parameters:
 * receivedParameters): `claimed` is their resource row, inserted ready — no pending row, commit and
 * update before it (a quarter of an upload's Postgres CPU, docs/benchmarks.md).
 */
export const receivedExpressions = `claimed as (
    ${pendingColumns} values (?, ?, ?, ?, ?, ?, ?, 'ready', now(), ?) returning *),
  ${queuedExpression}`;

export const receivedParameters = (scope: EntryScope, received: ReceivedBytes, mimeType?: string | null) => [
  received.id,
  scope.repository.id,
  received.name,
  mimeType || received.mimeType,
  received.fileSize,
  received.md5,
  received.storagePath,
  scope.principal.userName,
  // what the first bytes say travels with the queue row: the extraction of a kind it does not read opens no file (Migration20261207100000QueuedPdfMark)
  hasPdfMark(received.file.head),
  scope.repository.fullTextEnabled,
];

export const uploadNotFound = (uploadId: string) => notFound(`upload '${uploadId}' not found (or already used)`);

/**
 * Takes over the pending upload `uploadId` of this caller in this repository (one statement). Call it
 * inside the transaction that creates the version using it: a rollback leaves the upload pending.
 */
export async function claimUpload(scope: EntryScope, uploadId: string, mimeType?: string | null): Promise<Resource> {
  const [row] = await scope.em.execute<Record<string, unknown>[]>(`with ${claimExpressions} select * from claimed`, claimParameters(scope, uploadId, mimeType));
  if (!row) throw uploadNotFound(uploadId);
  return scope.em.map(Resource, row);
}

/** The file name of the caller's pending upload `uploadId` (the name of a content created without one). */
export async function pendingUploadName(scope: EntryScope, uploadId: string): Promise<string> {
  const [row] = await scope.em.execute<{ name: string }[]>(
    `select name from resource where id = ? and repository_id = ? and state = 'pending' and creator = ?`,
    [uploadId, scope.repository.id, scope.principal.userName],
  );
  if (!row) throw uploadNotFound(uploadId);
  return row.name;
}

/** An upload id nobody turned into a content within this time is abandoned. */
export const uploadLifetimeMs = 3_600_000;

/** Drops the caller's pending upload `uploadId` and its bytes (its content could not be created). */
export async function discardUpload(scope: EntryScope, uploadId: string): Promise<void> {
  // a fork: the caller's transaction may have failed already
  const rows = await scope.em.fork().getConnection().execute<{ storage_path: string }[]>(
    `delete from resource where id = ? and repository_id = ? and creator = ? and state = 'pending' returning storage_path`,
    [uploadId, scope.repository.id, scope.principal.userName],
  );
  for (const row of rows) await scope.services.contentStore.remove(row.storage_path);
}

/**
 * Removes the files of both stores that no row refers to and that were last written more than
 * `olderThanMs` ago (younger ones may belong to a transaction still under way): bytes a crash left
 * between a deletion's commit and its file removals, or between a create's placing of received bytes
 * and its row's commit. Answers how many went, per store.
 */
export async function sweepUnreferencedFiles(em: EntityManager, services: Services, olderThanMs: number): Promise<{ contents: number; pageImages: number }> {
  const sweep = async (store: Services['contentStore'], table: 'resource' | 'representation') => {
    let removed = 0;
    for await (const paths of store.committedFiles(olderThanMs)) {
      // a file's name is its row's id (storagePathFor)
      const idOf = (file: string) => file.slice(file.lastIndexOf('/') + 1);
      const missing = await missingRows(em, table, paths.map(idOf));
      for (const unreferenced of paths.filter((file) => missing.has(idOf(file)))) {
        await store.remove(unreferenced);
        removed++;
      }
    }
    return removed;
  };
  return { contents: await sweep(services.contentStore, 'resource'), pageImages: await sweep(services.cacheStore, 'representation') };
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
  // the verb has committed: a deadlock here (the cascade to a text an extraction is writing) is run
  // again, and one that persists is logged, not answered, since what the caller asked for is done
  let rows: { id: string; storage_path: string }[];
  try {
    rows = await retryingTransientConflicts(scope.logger, () =>
      scope.em.getConnection().execute<{ id: string; storage_path: string }[]>(
        `delete from resource r where r.id = any(array[?]::text[]) and r.state = 'ready'
           and not exists (select 1 from entry e where e.resource_id = r.id) returning id, storage_path`,
        [ids],
      ),
    );
  } catch (error) {
    if (!isTransientConflict(error)) throw error;
    scope.logger.error({ err: error, reasonCode: 'conflict', resourceIds: ids }, 'resources no entry refers to any more were left: concurrent transactions kept colliding with their removal');
    return;
  }
  for (const row of rows) await scope.services.contentStore.remove(row.storage_path);
}

/**
 * Takes the page images (representations) of the entries `entrySelect` selects out of the database,
 * in the caller's transaction, before the entries go (their rows would follow by cascade and the files
 * would stay in the cache store). Answers their files, to remove once the transaction committed.
 * The entries are locked first: a conversion running meanwhile cannot record a page under them (its
 * insert waits, then fails on the deleted entry and the job removes its files) after their pages were taken.
 */
export async function takeRepresentations(em: EntityManager, entrySelect: string, params: unknown[]): Promise<string[]> {
  const rows = await em.execute<{ storage_path: string }[]>(
    `with locked as (select id from entry where id in (${entrySelect}) for update)
     delete from representation where source_entry_id in (select id from locked) returning storage_path`,
    params,
  );
  return rows.map((row) => row.storage_path);
}

/** Removes page images whose rows are gone (committed). */
export async function removeRepresentationFiles(scope: EntryScope, storagePaths: string[]): Promise<void> {
  for (const storagePath of storagePaths) await scope.services.cacheStore.remove(storagePath);
}
