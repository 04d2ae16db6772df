import { conflict, isForeignKeyViolation, isUniqueViolation, notFound, type ServiceError } from '../../errors.js';
import { Entry } from './entry.entity.js';
import { requireEntry } from './queries.js';
import type { EntryScope } from './scope.js';

/**
 * Runs `work` in one database transaction on a fresh fork of the request's entity manager (so a failed
 * attempt leaves nothing behind in the request's unit of work, and rows the request loaded earlier are
 * read afresh). Failed writes as `entryWriteFailure` says (`clash` is a function when the name is
 * known only once `work` ran).
 */
export async function inTransaction<T>(
  scope: EntryScope,
  work: (tx: EntryScope) => Promise<T>,
  clash: string | (() => string) = 'an active entry with that name exists in that folder',
): Promise<T> {
  try {
    const result = await scope.em.fork().transactional((em) => work({ ...scope, em }));
    // what the request loaded before may have changed: later reads (the answer's nested parts) go to the database
    scope.em.clear();
    return result;
  } catch (error) {
    throw entryWriteFailure(error, clash) ?? error;
  }
}

/**
 * What a failed write of entries means for the caller: a unique-index violation is a name taken (409
 * saying `clash`), a foreign-key violation a folder deleted by a concurrent request (404).
 */
export function entryWriteFailure(error: unknown, clash: string | (() => string)): ServiceError | undefined {
  if (isUniqueViolation(error)) return conflict(typeof clash === 'string' ? clash : clash());
  if (isForeignKeyViolation(error)) return notFound('the target folder was deleted meanwhile');
  return undefined;
}

/** The 409 of a name taken by another active entry of the folder. */
export const nameClash = (name: string) => `an active entry named '${name}' exists in that folder`;

export interface LockedChronicle {
  /** the version (or working copy) the caller addressed */
  entry: Entry;
  /** every row of its chronicle: versions and the working copy */
  rows: Entry[];
  /** the newest CURRENT version */
  latest: Entry;
  workingCopy: Entry | null;
}

/**
 * The content `id` and every row of its chronicle, locked (`FOR UPDATE`, in id order so that verbs on
 * one content never deadlock) for the rest of the transaction, so that a check and the change it
 * guards see the same state.
 */
export async function lockChronicle(tx: EntryScope, id: string): Promise<LockedChronicle> {
  const { chronicalId } = await requireEntry(tx, id, 'CONTENT');
  await tx.em.execute(`select id from entry where chronical_id = ? and repository_id = ? order by id for update`, [chronicalId, tx.repository.id]);
  // read in a second statement: the locking one, having waited, misses rows the holder inserted (a
  // working copy), since its snapshot is older; `refresh`: the look-up above ran before the lock
  const rows = await tx.em.find(Entry, { chronicalId, repositoryId: tx.repository.id }, { refresh: true, orderBy: { id: 'asc' } });
  const entry = rows.find((row) => row.id === id);
  const latest = rows.find((row) => row.isLatest && row.versionStatus !== 'WORKING_COPY');
  // deleted between the look-up and the lock (for example purged by another request)
  if (!entry || !latest) throw notFound(`content '${id}' not found in repository '${tx.repository.name}'`);
  const workingCopy = rows.find((row) => row.versionStatus === 'WORKING_COPY') ?? null;
  return { entry, rows, latest, workingCopy };
}

/**
 * Folder moves and deletions of one repository run one at a time (a transaction-scoped advisory
 * lock): two crossing moves (a into b, b into a) would each pass the cycle check alone, and nothing
 * may move into a subtree being deleted.
 */
export async function lockFolderTree(tx: EntryScope): Promise<void> {
  await tx.em.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`folder-tree:${tx.repository.id}`]);
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
