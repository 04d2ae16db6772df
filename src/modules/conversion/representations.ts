import type { EntityManager } from '@mikro-orm/postgresql';
import type { Statement } from '../../db/short-transaction.js';
import { notFound } from '../../errors.js';
import type { EntryScope } from '../entries/scope.js';
import { requireEntry } from '../entries/queries.js';
import { authorize, type AuthorizeOptions } from '../access/policy.js';
import type { Entry } from '../entries/entry.entity.js';

/** A page image of a content version in the cache store (DESIGN §4 representations). */
export interface RepresentationRecord {
  id: string;
  repositoryId: string;
  sourceEntryId: string;
  format: string;
  page: number;
  pageCount: number;
  status: string;
  mimeType: string;
  fileSize: number;
  width: number;
  height: number;
  storagePath: string;
  jobId: string | null;
  createdAt: Date;
}

const toRecord = (row: Record<string, any>): RepresentationRecord => ({
  id: row.id,
  repositoryId: row.repository_id,
  sourceEntryId: row.source_entry_id,
  format: row.format,
  page: row.page,
  pageCount: row.page_count,
  status: row.status,
  mimeType: row.mime_type,
  fileSize: Number(row.file_size),
  width: row.width,
  height: row.height,
  storagePath: row.storage_path,
  jobId: row.job_id,
  createdAt: new Date(row.created_at),
});

/** The storage id of a page image: derived from what it is, so a retried job writes the same file. */
export const representationId = (sourceEntryId: string, format: string, page: number) => `${sourceEntryId}_${format}_${page}`;

/**
 * The statement recording page images (several in one statement: the tallies' statement triggers run
 * once for all of them). A page recorded before is rendered again only when it must change (a
 * placeholder, see the convert job), so the row then takes the new render (its file was replaced
 * under the same path).
 */
export function representationStatement(rows: Omit<RepresentationRecord, 'createdAt'>[]): Statement {
  return {
    sql: `insert into representation (id, repository_id, source_entry_id, format, page, page_count, status, mime_type, file_size, width, height, storage_path, job_id)
     values ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
     on conflict (source_entry_id, format, page) do update set page_count = excluded.page_count, status = excluded.status, file_size = excluded.file_size,
       width = excluded.width, height = excluded.height, storage_path = excluded.storage_path, job_id = excluded.job_id, created_at = now()`,
    params: rows.flatMap((row) => [
      row.id,
      row.repositoryId,
      row.sourceEntryId,
      row.format,
      row.page,
      row.pageCount,
      row.status,
      row.mimeType,
      row.fileSize,
      row.width,
      row.height,
      row.storagePath,
      row.jobId,
    ]),
  };
}

export async function representationsOf(em: EntityManager, sourceEntryId: string, format?: string): Promise<RepresentationRecord[]> {
  const rows: Record<string, any>[] = await em.execute(
    `select * from representation where source_entry_id = ? and (?::text is null or format = ?) order by format, page`,
    [sourceEntryId, format ?? null, format ?? null],
  );
  return rows.map(toRecord);
}

/**
 * The content whose page images are asked for: they show its bytes, so the rules of its download apply
 * (a deactivated content's pages only to its owner and administrators, with includeInactive).
 */
export async function readableSource(scope: EntryScope, contentId: string, options: AuthorizeOptions): Promise<Entry> {
  const content = await requireEntry(scope, contentId, 'CONTENT');
  await authorize(scope, 'download', { entry: content }, options);
  return content;
}

/** GET C/content/{id}/representations: the page images of that version of the content. */
export async function listRepresentations(scope: EntryScope, contentId: string, options: AuthorizeOptions = {}): Promise<{ count: number; entries: RepresentationRecord[] }> {
  const content = await readableSource(scope, contentId, options);
  const entries = await representationsOf(scope.em, content.id);
  return { count: entries.length, entries };
}

/** GET C/representations/{id}/download: a page image, under the rules of its content's download. */
export async function representationForDownload(scope: EntryScope, id: string, options: AuthorizeOptions = {}): Promise<RepresentationRecord> {
  const rows: Record<string, any>[] = await scope.em.execute(`select * from representation where id = ? and repository_id = ?`, [id, scope.repository.id]);
  if (!rows[0]) throw notFound(`representation '${id}' not found in repository '${scope.repository.name}'`);
  const representation = toRecord(rows[0]);
  await readableSource(scope, representation.sourceEntryId, options);
  return representation;
}
