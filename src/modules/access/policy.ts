import type { EntityManager } from '@mikro-orm/postgresql';
import { accessDenied, conflict, notFound, type ServiceError } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { loginEventTypes } from '../events/event-types.js';
import { mayAdminister } from './roles.js';
import type { Entry } from '../entries/entry.entity.js';
import type { RepositoryRecord } from '../repositories/operations.js';
import type { SqlPredicate } from '../search/entry-query.js';
import { levelIn, levelOn, permissionOfLevel, readsAll, type AclCache, type Level, type ReadableAcls } from './acl.js';

/*
 * The object-level rules of the service in one place: who may do what to which entry, and in which
 * state. Every entry operation asks `authorize` before it changes (or hands out) anything, and every
 * lookup `mayRead` (entries/queries.ts `requireEntry`); searches add `visibleEntries` to their predicates.
 *
 * Two kinds of rule, checked in this order (DESIGN §10):
 * - access: administrators may do everything; the owner of an entry holds `all` on it; otherwise the
 *   highest permission any of the caller's principals holds in the entry's effective ACL (acl.ts).
 *   An entry the caller may not read is a 404 (it is not there for them); one it may read but not
 *   change as asked is a 403 (accessDenied);
 * - state: a 409 (conflict) refuses because of a state that can change (a lock, a working copy, a
 *   deactivated content, an earlier version).
 *
 * Bytes come in through verbs on a content (create, replace-resource, check-in: these rules) over an
 * upload that only its uploader may claim (`claimExpressions`); staging an upload needs a session only.
 */

/**
 * What an operation does to an entry (its verb), with the permission it needs (DESIGN §10): `read` to
 * see and copy it, `write` to change it (and, on a folder, to put entries into it: `fileInto`), `all`
 * to delete, restore or purge it and to change its ACL.
 */
const requiredLevels = {
  read: 1,
  download: 1,
  copy: 1,
  update: 2,
  tag: 2,
  checkOut: 2,
  checkIn: 2,
  cancelCheckOut: 2,
  lock: 2,
  unlock: 2,
  replaceResource: 2,
  convert: 2,
  fileInto: 2,
  delete: 3,
  restore: 3,
  purge: 3,
  changeAcl: 3,
} as const satisfies Record<string, Level>;

export type EntryAction = keyof typeof requiredLevels;
export const requiredLevelOf = (action: EntryAction): Level => requiredLevels[action];

/** What the rules read of an entry. */
export type EntryFacts = Pick<Entry, 'id' | 'name' | 'active' | 'owner' | 'lockedBy' | 'isLatest' | 'version' | 'createdBy'> & {
  entryType?: Entry['entryType'];
  /** the effective ACL (null: just inserted, read from the row) */
  aclId?: Entry['aclId'];
};

/** Who asks, with what the access rules read: the unit of work and this process's ACL cache. */
export interface AccessScope {
  em: EntityManager;
  principal: Principal;
  services: { acls: AclCache };
  repository: Pick<RepositoryRecord, 'id' | 'name' | 'acl'>;
}

/**
 * The entry an action addresses; for versioning verbs also its chronicle as locked (`lockChronicle`):
 * the newest CURRENT version (default: the entry) and the working copy.
 */
export interface PolicySubject {
  entry: EntryFacts;
  latest?: EntryFacts;
  workingCopy?: EntryFacts | null;
}

export interface AuthorizeOptions {
  /** the request asked for deactivated entries too (downloads: administrators and the owner get them) */
  includeInactive?: boolean;
}

/** Who holds a working copy (the check-out locked the chronicle for that user). */
export const holderOf = (workingCopy: EntryFacts) => workingCopy.lockedBy ?? workingCopy.createdBy;

const lockedByOther = (principal: Principal, entry: EntryFacts) =>
  entry.lockedBy && entry.lockedBy !== principal.userName ? conflict(`'${entry.name}' is locked by ${entry.lockedBy}`) : undefined;

const deactivated = (latest: EntryFacts) => (latest.active ? undefined : conflict(`content '${latest.name}' is deactivated: restore it first`));

/** Earlier versions are read-only (DESIGN §5): only the latest version and the working copy change. */
const earlierVersion = (entry: EntryFacts) =>
  entry.isLatest ? undefined : conflict(`'${entry.id}' is version ${entry.version} of '${entry.name}', an earlier version: earlier versions are read-only`);

/**
 * While a chronicle is checked out its latest version is read-only: check-in makes the working copy the
 * latest version, and a change to the one it replaces would be lost. Changes go to the working copy.
 */
const checkedOutOriginal = (entry: EntryFacts, workingCopy: EntryFacts | null) =>
  workingCopy && entry.id !== workingCopy.id && entry.isLatest
    ? conflict(`'${entry.name}' is checked out by ${holderOf(workingCopy)}: change its working copy '${workingCopy.id}' instead (check-in makes it the latest version)`)
    : undefined;

type Rule = (principal: Principal, subject: Required<PolicySubject>, options: AuthorizeOptions) => ServiceError | undefined;

/** A change of a version's metadata (PATCH, tags): not under another user's lock, not an earlier version, not while its chronicle is checked out. */
const metadataChange: Rule[] = [
  (principal, { entry }) => lockedByOther(principal, entry),
  (_, { entry }) => earlierVersion(entry),
  (_, { entry, workingCopy }) => checkedOutOriginal(entry, workingCopy),
];

/** A deactivated content's bytes are its owner's and the administrators', when they ask for deactivated entries. */
const readsBytes: Rule = (principal, { entry }, { includeInactive }) =>
  entry.active || (includeInactive && (mayAdminister(principal) || entry.owner === principal.userName))
    ? undefined
    : notFound(`content '${entry.id}' is deactivated (only its owner and administrators may ask for it with includeInactive=true)`);

/** Per action, its state rules in the order they are checked: the first refusal is the answer. */
const rules: Record<EntryAction, Rule[]> = {
  read: [],
  convert: [readsBytes],
  fileInto: [],
  purge: [],
  changeAcl: [],
  download: [readsBytes],
  // a lock on the original does not block copying
  copy: [],
  update: metadataChange,
  tag: metadataChange,
  delete: [(principal, { entry }) => lockedByOther(principal, entry)],
  restore: [(principal, { entry }) => lockedByOther(principal, entry)],
  checkOut: [
    (_, { latest, workingCopy }) => (workingCopy ? conflict(`'${latest.name}' is already checked out by ${holderOf(workingCopy)}`) : undefined),
    (_, { latest }) => deactivated(latest),
    (principal, { latest }) => lockedByOther(principal, latest),
  ],
  // only the holder checks in (an administrator neither: the working copy is the holder's work)
  checkIn: [
    (_, { latest, workingCopy }) => (workingCopy ? undefined : conflict(`'${latest.name}' is not checked out: check it out before checking in`)),
    (principal, { latest, workingCopy }) =>
      holderOf(workingCopy!) === principal.userName ? undefined : conflict(`'${latest.name}' is checked out by ${holderOf(workingCopy!)}`),
    (_, { latest }) => deactivated(latest),
  ],
  // cancel and unlock work on deactivated contents too, so that a lock never outlives its use
  cancelCheckOut: [
    (_, { latest, workingCopy }) => (workingCopy ? undefined : conflict(`'${latest.name}' is not checked out`)),
    (principal, { latest, workingCopy }) =>
      holderOf(workingCopy!) === principal.userName || mayAdminister(principal) ? undefined : conflict(`'${latest.name}' is checked out by ${holderOf(workingCopy!)}`),
  ],
  lock: [(_, { latest }) => deactivated(latest), (principal, { latest }) => lockedByOther(principal, latest)],
  unlock: [
    (_, { latest, workingCopy }) =>
      workingCopy
        ? conflict(`'${latest.name}' is checked out by ${holderOf(workingCopy)}: check it in or cancel the check-out to release the lock`)
        : undefined,
    (principal, { latest }) =>
      !latest.lockedBy || latest.lockedBy === principal.userName || mayAdminister(principal) ? undefined : conflict(`'${latest.name}' is locked by ${latest.lockedBy}`),
  ],
  // new bytes while a working copy exists go through check-in, for its holder too
  replaceResource: [
    (principal, { latest, workingCopy }) => {
      if (!workingCopy) return undefined;
      const holder = holderOf(workingCopy);
      return conflict(
        holder === principal.userName
          ? `'${latest.name}' is checked out by you: pass the new file to check-in (or cancel the check-out)`
          : `'${latest.name}' is checked out by ${holder}`,
      );
    },
    (_, { latest }) => deactivated(latest),
    (principal, { latest }) => lockedByOther(principal, latest),
  ],
};

/** The state rules of `action` (no access rule): returns, or throws the 404/409 that says why not. */
export function checkState(principal: Principal, action: EntryAction, subject: PolicySubject, options: AuthorizeOptions = {}): void {
  const full = { entry: subject.entry, latest: subject.latest ?? subject.entry, workingCopy: subject.workingCopy ?? null };
  for (const rule of rules[action]) {
    const refusal = rule(principal, full, options);
    if (refusal) throw refusal;
  }
}

const kindOf = (entry: EntryFacts) => (entry.entryType === 'FOLDER' ? 'folder' : entry.entryType === 'CONTENT' ? 'content' : 'entry');

/** The 404 of an entry that is not there for the caller: the same words as for one that does not exist. */
export const entryNotFound = (kind: string, id: string, repository: Pick<RepositoryRecord, 'name'>) =>
  notFound(`${kind} '${id}' not found in repository '${repository.name}'`);

const refusalOf = (action: EntryAction, level: Level, entry: EntryFacts) =>
  accessDenied(
    `${kindOf(entry)} '${entry.name}' (${entry.id}): ${action} needs the permission ${permissionOfLevel(requiredLevels[action])}, you hold ${permissionOfLevel(level)}`,
  );

/** The caller's permission level on an entry (administrators and the owner: all). */
export const levelOnEntry = (scope: AccessScope, entry: EntryFacts) =>
  levelOn(scope, scope.services.acls, scope.principal, { id: entry.id, owner: entry.owner, aclId: entry.aclId ?? null });

/** Whether the caller may read an entry (else it is not there for them). */
export const mayRead = async (scope: AccessScope, entry: EntryFacts) => (await levelOnEntry(scope, entry)) >= 1;

/**
 * Whether the caller may see an event of the outbox (live `contentEvents`): administrators see every
 * event; others those of an entry they may read now. An event without an entry (a repository's ACL, a
 * job) or whose entry is gone (purged) is the administrators' only.
 */
export const mayReadEvent = async (scope: AccessScope, entry: EntryFacts | null) =>
  mayAdminister(scope.principal) || (entry !== null && (await mayRead(scope, entry)));

/** The caller's permission level on the repository's root (its ACL): what creating at the top needs. */
const levelOnRoot = (scope: AccessScope): Level => (mayAdminister(scope.principal) ? 3 : levelIn(scope.principal, scope.repository.acl));

/**
 * Whether the caller may do `action` to the subject now: returns, or throws the 404 (may not read),
 * 403 (may read, not change as asked) or 409 (state) that says why not.
 */
export async function authorize(scope: AccessScope, action: EntryAction, subject: PolicySubject, options: AuthorizeOptions = {}): Promise<void> {
  const level = await levelOnEntry(scope, subject.entry);
  if (level < 1) throw entryNotFound(kindOf(subject.entry), subject.entry.id, scope.repository);
  if (level < requiredLevels[action]) throw refusalOf(action, level, subject.entry);
  checkState(scope.principal, action, subject, options);
}

/** Putting an entry at the repository's root (no folder): the root's ACL decides (its changes are administrators'). */
export function authorizeAtRoot(scope: AccessScope): void {
  const level = levelOnRoot(scope);
  if (level < requiredLevels.fileInto) {
    throw accessDenied(`the root of repository '${scope.repository.name}': fileInto needs the permission ${permissionOfLevel(requiredLevels.fileInto)}, you hold ${permissionOfLevel(level) ?? 'none'}`);
  }
}

/**
 * The condition on an entry joined by a dot path (`parent.`, `predecessor.`): one the caller may not
 * read matches nothing, as if absent. It reads the caller from `readerTable` (a CTE the search puts
 * first in its statement, `readerStatement`), so that the join's SQL holds no parameter of its own.
 */
export const readerTable = 'crs_reader';
export const readableJoinCondition = (alias: string) =>
  `((select acl_ids from ${readerTable}) is null or ${alias}.acl_id = any((select acl_ids from ${readerTable})::bigint[]) or ${alias}.owner = (select user_name from ${readerTable}))`;

/** The CTE `readableJoinCondition` reads, with its parameters: no ACL ids (null) for a caller who reads everything. */
export function readerStatement(principal: Principal, readable: ReadableAcls | undefined): { sql: string; params: unknown[] } {
  const ids = readsAll(principal, readable) ? null : requireReadable(readable).ids;
  return { sql: `with ${readerTable} (acl_ids, user_name) as (select ?::bigint[], ?::text) `, params: [ids, principal.userName] };
}

/** The readable ACLs a search of a caller who is not an administrator computed first (`readableAcls`). */
function requireReadable(readable: ReadableAcls | undefined): ReadableAcls {
  if (!readable) throw new Error('the readable ACLs of a caller who is not an administrator were not computed');
  return readable;
}

const readableMemo = new WeakMap<EntityManager, Map<string, Promise<ReadableAcls>>>();

/**
 * The ACLs of the scope's repository the caller may read (undefined for administrators: all), once per
 * unit of work (a request) and repository.
 */
export function readableAcls(scope: AccessScope): Promise<ReadableAcls | undefined> {
  if (mayAdminister(scope.principal)) return Promise.resolve(undefined);
  let byRepository = readableMemo.get(scope.em);
  if (!byRepository) readableMemo.set(scope.em, (byRepository = new Map()));
  const key = `${scope.repository.id}\u0000${scope.principal.userName}`;
  let readable = byRepository.get(key);
  if (!readable) {
    readable = scope.services.acls.readableOf(scope.em, scope.principal, scope.repository.id);
    byRepository.set(key, readable);
  }
  return readable;
}

/**
 * The entries a search may show the principal: those of the repository in scope whose ACL it may read
 * or that it owns; all of them for administrators. `readable`: the caller's readable ACLs
 * (AclCache.readableOf), needed for anyone but an administrator. `wholeRepository`: nothing narrower
 * than the repository, so its maintained totals may answer counts.
 */
export function visibleEntries(principal: Principal, repository: Pick<RepositoryRecord, 'id'>, readable: ReadableAcls | undefined): SqlPredicate & { wholeRepository: boolean } {
  if (readsAll(principal, readable)) return { sql: 'e.repository_id = ?', params: [repository.id], wholeRepository: true };
  return { sql: '(e.repository_id = ? and (e.acl_id = any(?::bigint[]) or e.owner = ?))', params: [repository.id, requireReadable(readable).ids, principal.userName], wholeRepository: false };
}

/**
 * The audit events (DESIGN §11) a caller may see, as a condition on the event row `ev`; undefined for
 * administrators, who see every event. Anyone else sees, in a repository's trail (`readable`: its
 * readable ACLs there), the events of the entries it may read now — through the chronicle's current
 * effective ACL, or as its owner — so the events of a purged entry, and those of the repository itself
 * (its root ACL, its limits), are administrators' only; in the administration trail, its own sign-ins.
 *
 * The chronicle's ACL is read from event_chronicle (Migration20261128150000EventTallies: the ACL all its
 * entries share, kept in their own statements; 0 once none is left), the ACL its counts are tallied
 * under. Each `exists` is planned both ways and chosen by how many events it will check: a probe per
 * event (a few events, or a page that stops early), or the readable chronicles hashed once (one index
 * range per readable ACL) and a hash probe per event — a user who sees few of an actor's 20,000 events
 * paid 220 ms probing the entries of each (docs/benchmarks.md).
 */
export function visibleEvents(principal: Principal, trail: { repositoryId: string; readable: ReadableAcls | undefined } | 'administration'): SqlPredicate | undefined {
  if (mayAdminister(principal)) return undefined;
  // lists go as one array literal: the driver would spread an array into several parameters, and an
  // array Postgres knows when it plans is searched by hashing (one computed by a subquery is scanned
  // through for every row: 2.6 s for a user's page of a million events, docs/benchmarks.md)
  if (trail === 'administration') return { sql: 'ev.actor = ? and ev.type = any(?::text[])', params: [principal.userName, `{${loginEventTypes.join(',')}}`] };
  return {
    sql: `(exists (select 1 from event_chronicle c where c.repository_id = ev.repository_id and c.chronical_id = ev.chronical_id and c.acl_id = any(?::bigint[]))
           or exists (select 1 from entry e where e.repository_id = ev.repository_id and e.chronical_id = ev.chronical_id and e.owner = ?))`,
    params: [`{${requireReadable(trail.readable).ids.join(',')}}`, principal.userName],
  };
}

/**
 * `visibleEvents` for a count summed from event_tally (Migration20261128150000EventTallies): the tally
 * rows `t` the caller may see — administrators those of every ACL at once (key -1); a user, in a
 * repository's trail, those of the ACLs it may read — and of the pending rows (grain 4, not rolled up
 * yet: Migration20261207180000EventTallyPending, each under its chronicle's ACL only) those of the ACLs
 * it may read, an administrator all; and then a condition on event rows `ev` for the
 * ones it sees beyond them: of the chronicles it owns an entry of, counted under an ACL it may not read.
 * Undefined when tallies cannot tell: a user's own sign-ins in the administration trail (counted from its events).
 */
export function visibleEventTallies(
  principal: Principal,
  trail: { repositoryId: string; readable: ReadableAcls | undefined } | 'administration',
): { tally: SqlPredicate; pending: SqlPredicate[]; owned?: SqlPredicate } | undefined {
  if (mayAdminister(principal)) return { tally: { sql: 't.acl_id = -1', params: [] }, pending: [] };
  if (trail === 'administration') return undefined;
  const ids = `{${requireReadable(trail.readable).ids.join(',')}}`;
  return {
    tally: { sql: 't.acl_id = any(?::bigint[])', params: [ids] },
    pending: [{ sql: 't.acl_id = any(?::bigint[])', params: [ids] }],
    owned: {
      sql: `ev.chronical_id in (select e.chronical_id from entry e where e.repository_id = ? and e.owner = ?)
            and not exists (select 1 from event_chronicle c where c.repository_id = ev.repository_id and c.chronical_id = ev.chronical_id and c.acl_id = any(?::bigint[]))`,
      params: [trail.repositoryId, principal.userName, ids],
    },
  };
}

/** What a caller does to a job (the job system's records, C/jobs). */
export type JobAction = 'read' | 'cancel';

/**
 * Who may read or cancel a job: the user who submitted it, and administrators. Another user's job is
 * hidden from reading (404, as if it did not exist); cancelling it is a 403 (issue 30 asks for it).
 */
export function authorizeJob(principal: Principal, action: JobAction, job: { id: string; clientUsername: string }): void {
  if (job.clientUsername === principal.userName || mayAdminister(principal)) return;
  throw action === 'read' ? notFound(`job '${job.id}' not found`) : accessDenied(`job '${job.id}' is another user's: only its submitter and administrators may cancel it`);
}
