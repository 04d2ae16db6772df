import { LockMode } from '@mikro-orm/core';
import { conflict, isUniqueViolation, notFound } from '../../errors.js';
import { Entry } from './entry.entity.js';
import { requireEntry } from './queries.js';
import type { EntryScope } from './scope.js';

/**
 * Runs `work` in one database transaction on a fresh fork of the request's entity manager (so a failed
 * attempt leaves nothing behind in the request's unit of work). A unique-name clash becomes a 409 and a
 * folder deleted by a concurrent request (a foreign-key violation on `parent_id`) a 404.
 */
export async function inTransaction<T>(scope: EntryScope, work: (tx: EntryScope) => Promise<T>, clashName?: () => string): Promise<T> {
  try {
    return await scope.em.fork().transactional((em) => work({ ...scope, em }));
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw conflict(clashName ? `an active entry named '${clashName()}' exists in that folder` : 'an active entry with that name exists in that folder');
    }
    if (isForeignKeyViolation(error)) throw notFound('the target folder was deleted meanwhile');
    throw error;
  }
}

function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; name?: string; cause?: { code?: string } };
  return e?.code === '23503' || e?.cause?.code === '23503' || e?.name === 'ForeignKeyConstraintViolationException';
}

export interface LockedChronicle {
  /** the version (or working copy) the caller addressed */
  entry: Entry;
  /** every row of its chronicle: versions and the working copy */
  rows: Entry[];
}

/**
 * The content `id` and every row of its chronicle, locked (`FOR UPDATE`) for the rest of the
 * transaction, so that a lock check and the change it guards see the same state.
 */
export async function lockChronicle(tx: EntryScope, id: string): Promise<LockedChronicle> {
  const found = await requireEntry(tx, id, 'CONTENT');
  const rows = await tx.em.find(
    Entry,
    { chronicalId: found.chronicalId, repositoryId: tx.repository.id },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: 'asc' } },
  );
  const entry = rows.find((row) => row.id === id);
  if (!entry) throw notFound(`content '${id}' not found in repository '${tx.repository.name}'`);
  return { entry, rows };
}

/** Earlier versions are read-only (DESIGN §5): only the latest version and the working copy change. */
export function assertLatestOrWorkingCopy(entry: Entry): void {
  if (!entry.isLatest) {
    throw conflict(`'${entry.id}' is version ${entry.version} of '${entry.name}', an earlier version: earlier versions are read-only`);
  }
}

/** The entry as stored now, for the answer of a mutation (the request's identity map may hold an older copy). */
export async function reloaded(scope: EntryScope, id: string): Promise<Entry> {
  const entry = await scope.em.findOne(Entry, { id, repositoryId: scope.repository.id }, { refresh: true });
  if (!entry) throw notFound(`entry '${id}' not found in repository '${scope.repository.name}'`);
  return entry;
}

/**
 * An active latest entry other than the chronicle `exceptChronicalId` named `name` in the folder (or
 * the root): the check the unique index cannot make for a working copy, and a cheap one before copying
 * bytes.
 */
export async function nameTaken(scope: EntryScope, parentId: string | null, name: string, exceptChronicalId?: string): Promise<boolean> {
  const rows = await scope.em.execute<{ id: string }[]>(
    `select id from entry
      where repository_id = ? and coalesce(parent_id, '') = coalesce(?::text, '') and name = ?
        and active and is_latest and version_status is distinct from 'WORKING_COPY' and chronical_id <> coalesce(?::text, '')
      limit 1`,
    [scope.repository.id, parentId, name, exceptChronicalId ?? null],
  );
  return rows.length > 0;
}

/** Who changed the entry and when: every mutation sets both. */
export function touch(scope: EntryScope, entry: Entry, now = new Date()): void {
  entry.lastModifiedAt = now;
  entry.lastModifiedBy = scope.principal.userName;
}
