import { accessDenied, conflict, notFound, type ServiceError } from '../../errors.js';
import { isAdmin, type Principal } from '../auth/principal.js';
import type { Entry } from '../entries/entry.entity.js';
import type { RepositoryRecord } from '../repositories/operations.js';
import type { SqlPredicate } from '../search/entry-query.js';

/*
 * The object-level rules of the service in one place: who may do what to which entry, and in which
 * state. Every entry operation asks `authorize` before it changes (or hands out) anything; searches
 * add `visibleEntries` to their predicates. The access control lists of DESIGN §10 plug in here.
 *
 * 403 against 409: a 403 (accessDenied) is what the caller may never do, whatever the entry's state
 * (roles, later ACLs); a 409 (conflict) is refused because of a state that can change (a lock, a
 * working copy, a deactivated content, an earlier version); a 404 hides what the caller may not see.
 * Today's entry rules are all of the second and third kind; jobs have one of the first (`authorizeJob`).
 *
 * Bytes come in through verbs on a content (create, replace-resource, check-in: these rules) over an
 * upload that only its uploader may claim (`claimExpressions`); staging an upload needs a session only.
 */

/** What an operation does to an entry (its verb). */
export type EntryAction =
  | 'download'
  | 'copy'
  | 'update'
  | 'tag'
  | 'delete'
  | 'restore'
  | 'checkOut'
  | 'checkIn'
  | 'cancelCheckOut'
  | 'lock'
  | 'unlock'
  | 'replaceResource';

/** What the rules read of an entry. */
export type EntryFacts = Pick<Entry, 'id' | 'name' | 'active' | 'owner' | 'lockedBy' | 'isLatest' | 'version' | 'createdBy'>;

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

/** Per action, its rules in the order they are checked: the first refusal is the answer. */
const rules: Record<EntryAction, Rule[]> = {
  download: [
    (principal, { entry }, { includeInactive }) =>
      entry.active || (includeInactive && (isAdmin(principal) || entry.owner === principal.userName))
        ? undefined
        : notFound(`content '${entry.id}' is deactivated (only its owner and administrators may ask for it with includeInactive=true)`),
  ],
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
      holderOf(workingCopy!) === principal.userName || isAdmin(principal) ? undefined : conflict(`'${latest.name}' is checked out by ${holderOf(workingCopy!)}`),
  ],
  lock: [(_, { latest }) => deactivated(latest), (principal, { latest }) => lockedByOther(principal, latest)],
  unlock: [
    (_, { latest, workingCopy }) =>
      workingCopy
        ? conflict(`'${latest.name}' is checked out by ${holderOf(workingCopy)}: check it in or cancel the check-out to release the lock`)
        : undefined,
    (principal, { latest }) =>
      !latest.lockedBy || latest.lockedBy === principal.userName || isAdmin(principal) ? undefined : conflict(`'${latest.name}' is locked by ${latest.lockedBy}`),
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

/** Whether `principal` may do `action` to the subject now: returns, or throws the 403/404/409 that says why not. */
export function authorize(principal: Principal, action: EntryAction, subject: PolicySubject, options: AuthorizeOptions = {}): void {
  const full = { entry: subject.entry, latest: subject.latest ?? subject.entry, workingCopy: subject.workingCopy ?? null };
  for (const rule of rules[action]) {
    const refusal = rule(principal, full, options);
    if (refusal) throw refusal;
  }
}

/**
 * The entries a search may show the principal: those of the repository in scope (ACLs will narrow it).
 * `wholeRepository`: nothing narrower than the repository, so its maintained totals may answer counts.
 */
export function visibleEntries(_principal: Principal, repository: RepositoryRecord): SqlPredicate & { wholeRepository: boolean } {
  return { sql: 'e.repository_id = ?', params: [repository.id], wholeRepository: true };
}

/** What a caller does to a job (the job system's records, C/jobs). */
export type JobAction = 'read' | 'cancel';

/**
 * Who may read or cancel a job: the user who submitted it, and administrators. Another user's job is
 * hidden from reading (404, as if it did not exist); cancelling it is a 403 (issue 30 asks for it).
 */
export function authorizeJob(principal: Principal, action: JobAction, job: { id: string; clientUsername: string }): void {
  if (job.clientUsername === principal.userName || isAdmin(principal)) return;
  throw action === 'read' ? notFound(`job '${job.id}' not found`) : accessDenied(`job '${job.id}' is another user's: only its submitter and administrators may cancel it`);
}
