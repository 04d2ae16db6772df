import { setTimeout as sleep } from 'node:timers/promises';
import { conflict, isForeignKeyViolation, isTransientConflict, isUniqueViolation, notFound, type ServiceError } from '../../errors.js';
import { Entry } from './entry.entity.js';
import { requireEntry } from './queries.js';
import type { EntryScope } from './scope.js';

/** How often a transaction Postgres gave up on (deadlock, serialisation failure) is run again. */
const transientRetries = 3;

/**
 * Runs `attempt` again when Postgres gave up on it because of concurrent transactions (deadlock,
 * serialisation failure), after a random pause that grows (the transactions that collided do not meet
 * again at once), up to `transientRetries` times; then the conflict itself is thrown.
 */
export async function retryingTransientConflicts<T>(logger: EntryScope['logger'], attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isTransientConflict(error) || retry === transientRetries) throw error;
      logger.warn({ attempt: retry, code: (error as { code?: string }).code }, 'statement gave way to a concurrent transaction');
      await sleep((retry + 1) * (5 + Math.random() * 20));
    }
  }
}

/**
 * Runs `work` in one database transaction on a fresh fork of the request's entity manager (so a failed
 * attempt leaves nothing behind in the request's unit of work, and rows the request loaded earlier are
 * read afresh). Failed writes as `entryWriteFailure` says (`clash` is a function when the name is
 * known only once `work` ran). The locks are taken in one order (`lockFolderTree`, then
 * `lockChronicle`), so verbs do not deadlock each other; a deadlock that still happens (a folder
 * deleted while a content in it gets a new version) runs `work` again, a few times, then is a 409.
 */
export async function inTransaction<T>(
  scope: EntryScope,
  work: (tx: EntryScope) => Promise<T>,
  clash: string | (() => string) = 'an active entry with that name exists in that folder',
): Promise<T> {
  try {
    const result = await retryingTransientConflicts(scope.logger, () => scope.em.fork().transactional((em) => work({ ...scope, em })));
    // what the request loaded before may have changed: later reads (the answer's nested parts) go to the database
    scope.em.clear();
    return result;
  } catch (error) {
    if (isTransientConflict(error)) throw conflict('the entry was changed by concurrent requests: try again');
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

/** Classes of the two-key advisory locks (so that a folder tree and a chronicle never share a key). */
const lockClass = { folderTree: 1, chronicle: 2 } as const;

/**
 * The content `id` and every row of its chronicle, locked for the rest of the transaction, so that a
 * check and the change it guards see the same state. First the chronicle's advisory lock: every verb
 * on one content takes it before touching any row, so they run one after the other — row locks alone
 * deadlocked, since a verb that had waited saw the rows of its snapshot and not the version its
 * predecessor inserted, which a third verb may have locked meanwhile. Then the rows (`FOR UPDATE`, in
 * id order) against writers that do not take the chronicle lock (a folder's deletion).
 */
export async function lockChronicle(tx: EntryScope, id: string): Promise<LockedChronicle> {
  const { chronicalId } = await requireEntry(tx, id, 'CONTENT');
  await tx.em.execute(`select pg_advisory_xact_lock(?, hashtext(?))`, [lockClass.chronicle, chronicalId]);
  await tx.em.execute(`select id from entry where chronical_id = ? and repository_id = ? order by id for update`, [chronicalId, tx.repository.id]);
  // `refresh`: the look-up above ran before the lock, and what it read may have changed since
  const rows = await tx.em.find(Entry, { chronicalId, repositoryId: tx.repository.id }, { refresh: true, orderBy: { id: 'asc' } });
  const entry = rows.find((row) => row.id === id);
  const latest = rows.find((row) => row.isLatest && row.versionStatus !== 'WORKING_COPY');
  // deleted between the look-up and the lock (for example purged by another request)
  if (!entry || !latest) throw notFound(`content '${id}' not found in repository '${tx.repository.name}'`);
  const workingCopy = rows.find((row) => row.versionStatus === 'WORKING_COPY') ?? null;
  return { entry, rows, latest, workingCopy };
}

/**
 * Folder moves and deletions of one repository, and moves of contents, run one at a time (a
 * transaction-scoped advisory lock): two crossing moves (a into b, b into a) would each pass the cycle
 * check alone, and nothing may move into a subtree being deleted. Taken before any chronicle lock.
 */
export async function lockFolderTree(tx: EntryScope): Promise<void> {
  await tx.em.execute(`select pg_advisory_xact_lock(?, hashtext(?))`, [lockClass.folderTree, tx.repository.id]);
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
