import { randomUUID } from 'node:crypto';
import { illegalArguments } from '../../errors.js';
import { requireTypeAllowedIn } from '../access/folder-policies.js';
import { authorize } from '../access/policy.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, lockChronicle, nameClash, type LockedChronicle } from '../entries/chronicles.js';
import { Entry } from '../entries/entry.entity.js';
import { OrderingDirection } from '../entries/entry.types.js';
import { setChronicleLock } from '../entries/locks.js';
import { optionalMediaType } from '../entries/media-types.js';
import { requireEntry } from '../entries/queries.js';
import type { EntryScope } from '../entries/scope.js';
import { discardWorkingCopy } from '../entries/deletion.js';
import { claimUpload, removeRepresentationFiles, removeUnreferencedResources, takeRepresentations } from '../entries/uploads.js';
import { runEntryQuery, type EntriesPage, type SearchOptions } from '../search/entry-query.js';
import { requestTextExtraction } from '../fulltext/operations.js';
import { requestThumbnail } from '../conversion/thumbnails.js';

/*
 * Versioning (DESIGN §5, CMIS-like). Every version is an `entry` row of one chronicle (`chronical_id`);
 * `is_latest` marks the newest CURRENT version and the working copy. Every verb below runs in one
 * transaction that first locks the chronicle (`lockChronicle`: its advisory lock, then its rows),
 * so concurrent verbs on one content run one after the other and each sees what the previous one
 * committed; the partial unique indexes are the last line of defence and turn into 409s.
 *
 * Decisions (docs/versioning.md repeats them; who may do what is `authorize` in access/policy.ts):
 * - Any version id names its chronicle: check-out, check-in, cancel, lock, unlock, versions and
 *   replace-resource all accept the id of any version (the working copy included).
 * - A deactivated content is read-only: check-out, check-in, lock and replace-resource are 409s
 *   (restore it first); cancel-check-out and unlock still work, so a lock never outlives its use.
 * - Only the holder checks in (an administrator neither); the holder or an ADMIN cancels a check-out
 *   or removes a plain lock. A checked-out chronicle is unlocked only by check-in or cancel (409).
 * - lock of one's own lock and unlock of an unlocked content are idempotent (the content is answered).
 * - Replace-resource while a working copy exists is a 409 for everybody, the holder included: the
 *   holder passes the new bytes to check-in instead.
 * - Version labels count from the latest CURRENT version: minor 1.0 → 1.1, major 1.x → 2.0.
 */

interface Outcome<T> {
  result: T;
  /** resources that may no longer be used once the transaction committed */
  released?: (string | null)[];
  /** page images of removed entries, removed once the transaction committed */
  pageImages?: string[];
}

/**
 * Runs `work` in a transaction holding the row locks of the chronicle of version `id` (409 saying
 * `clash` on a unique-index violation: a race the locks did not cover, or a name clash); the resources
 * it released are removed after the commit.
 */
async function inChronicle<T>(
  scope: EntryScope,
  id: string,
  clash: string | (() => string),
  work: (tx: EntryScope, chronicle: LockedChronicle) => Promise<Outcome<T>>,
): Promise<T> {
  const { result, released = [], pageImages = [] } = await inTransaction(scope, async (tx) => work(tx, await lockChronicle(tx, id)), clash);
  await removeUnreferencedResources(scope, released);
  await removeRepresentationFiles(scope, pageImages);
  return result;
}

const label = (major: number, minor: number) => `${major}.${minor}`;

/** The version after `latest`: major → (n+1).0, minor → n.(m+1). */
function nextVersion(latest: Entry, major: boolean): { version: string; versionMajor: number; versionMinor: number } {
  const m = latest.versionMajor ?? 1;
  const n = latest.versionMinor ?? 0;
  return major ? { version: label(m + 1, 0), versionMajor: m + 1, versionMinor: 0 } : { version: label(m, n + 1), versionMajor: m, versionMinor: n + 1 };
}

/** A new row of the chronicle carrying `latest`'s metadata (check-out's working copy, a replaced resource). */
function newVersionRow(tx: EntryScope, latest: Entry, fields: Partial<Entry>): Entry {
  const now = new Date();
  const user = tx.principal.userName;
  return tx.em.create(Entry, {
    id: randomUUID(),
    repositoryId: latest.repositoryId,
    entryType: 'CONTENT',
    chronicalId: latest.chronicalId,
    name: latest.name,
    active: latest.active,
    owner: latest.owner,
    createdAt: now,
    createdBy: user,
    lastModifiedAt: now,
    lastModifiedBy: user,
    lockedAt: latest.lockedAt ?? null,
    lockedBy: latest.lockedBy ?? null,
    version: latest.version,
    versionMajor: latest.versionMajor,
    versionMinor: latest.versionMinor,
    versionStatus: 'CURRENT',
    isLatest: true,
    parentId: latest.parentId ?? null,
    predecessorId: latest.id,
    resourceId: latest.resourceId ?? null,
    typeName: latest.typeName ?? null,
    properties: { ...latest.properties },
    tags: [...latest.tags],
    comment: null,
    ...fields,
  });
}

/**
 * Check-out: a working copy of the latest version (new id, same chronicle, predecessor = the latest
 * version, same resource and version label) and a lock on the chronicle for the caller.
 */
export async function checkOut(scope: EntryScope, id: string): Promise<Entry> {
  return inChronicle(scope, id, `content '${id}' is already checked out`, async (tx, chronicle) => {
    const { rows, latest } = chronicle;
    await authorize(tx, 'checkOut', chronicle);
    // the working copy takes the lock over from `latest`
    setChronicleLock(rows, tx.principal.userName);
    const copy = newVersionRow(tx, latest, { versionStatus: 'WORKING_COPY' });
    await tx.em.flush();
    await recordEntryEvent(tx, 'CONTENT_CHECKED_OUT', copy, { version: latest.version });
    return { result: copy };
  });
}

const maxCommentLength = 4000;

/** How checkIn makes the next version: `major` defaults to true; without `uploadId` the version keeps its bytes. */
export interface CheckInInput {
  major?: boolean | null;
  /** at most `maxCommentLength` characters */
  comment?: string | null;
  uploadId?: string | null;
  /** the media type of the new bytes; default: sniffed from them */
  mimeType?: string | null;
}

/**
 * Check-in: the working copy becomes the new latest CURRENT version (major or minor after the latest
 * one), optionally over new bytes; the previous latest stays as a read-only older version; the lock is
 * released. Only the holder of the working copy checks in.
 */
export async function checkIn(scope: EntryScope, id: string, input: CheckInInput = {}): Promise<Entry> {
  const comment = input.comment ?? null;
  if (comment !== null && comment.length > maxCommentLength) throw illegalArguments(`comment is longer than ${maxCommentLength} characters`);
  const mimeType = optionalMediaType(input.mimeType);
  // the media type of new bytes: without them it would be dropped without a word
  if (mimeType && !input.uploadId) throw illegalArguments('mimeType: describes the new bytes of a check-in; send them with it (a file part), or leave it out');
  let name = '';
  const clash = () => `${nameClash(name)}: rename the working copy, then check in`;
  const checkedIn = await inChronicle(scope, id, clash, async (tx, chronicle) => {
    await authorize(tx, 'checkIn', chronicle);
    const { rows, latest } = chronicle;
    const workingCopy = chronicle.workingCopy!;
    // the working copy may have been renamed: its name joins the unique names of the folder now
    name = workingCopy.name;
    await requireTypeAllowedIn(tx.em, workingCopy.parentId, workingCopy.typeName ?? null);
    const previousResource = workingCopy.resourceId ?? null;
    // page images of the working copy show its old bytes: new bytes make them stale (the version keeps
    // the working copy's id, and a conversion would reuse them as renders of the new bytes)
    let pageImages: string[] = [];
    if (input.uploadId) {
      const resource = await claimUpload(tx, input.uploadId, mimeType);
      workingCopy.resourceId = resource.id;
      pageImages = await takeRepresentations(tx.em, 'select ?::text', [workingCopy.id]);
    }
    // the unique indexes allow one latest CURRENT version (and one active name) at a time: the old
    // latest steps back before the working copy steps up
    latest.isLatest = false;
    await tx.em.flush();
    const now = new Date();
    // the version is made now: its creation is the check-in, not the check-out that began the working copy
    Object.assign(workingCopy, nextVersion(latest, input.major ?? true), {
      versionStatus: 'CURRENT',
      predecessorId: latest.id,
      comment,
      createdAt: now,
      createdBy: tx.principal.userName,
      lastModifiedAt: now,
      lastModifiedBy: tx.principal.userName,
    });
    setChronicleLock(rows, null);
    await tx.em.flush();
    await recordEntryEvent(tx, 'CONTENT_CHECKED_IN', workingCopy, { version: workingCopy.version, newBytes: Boolean(input.uploadId) });
    const replaced = previousResource !== workingCopy.resourceId && previousResource !== latest.resourceId;
    return { result: workingCopy, released: replaced ? [previousResource] : [], pageImages };
  });
  // new bytes get their text; without them the version keeps the resource, and the resource its text
  if (input.uploadId) requestTextExtraction(scope);
  // the new version is the working copy, which had no preview: with or without new bytes it gets one
  requestThumbnail(scope, checkedIn);
  return checkedIn;
}

/** Cancel check-out: the working copy is deleted and the chronicle unlocked (its holder or an ADMIN). Answers the latest version. */
export async function cancelCheckOut(scope: EntryScope, id: string): Promise<Entry> {
  return inChronicle(scope, id, `content '${id}' changed meanwhile`, async (tx, chronicle) => {
    await authorize(tx, 'cancelCheckOut', chronicle);
    const workingCopy = chronicle.workingCopy!;
    const { resourceIds, pageImages } = await discardWorkingCopy(tx, chronicle);
    await recordEntryEvent(tx, 'CONTENT_CHECK_OUT_CANCELLED', workingCopy);
    return { result: chronicle.latest, released: resourceIds, pageImages };
  });
}

/** Locks the chronicle for the caller (idempotent for the holder; 409 when another user holds it). */
export async function lock(scope: EntryScope, id: string): Promise<Entry> {
  return inChronicle(scope, id, `content '${id}' changed meanwhile`, async (tx, chronicle) => {
    const { rows, entry, latest } = chronicle;
    await authorize(tx, 'lock', chronicle);
    if (latest.lockedBy === tx.principal.userName) return { result: entry };
    setChronicleLock(rows, tx.principal.userName);
    await tx.em.flush();
    await recordEntryEvent(tx, 'ENTRY_LOCKED', entry);
    return { result: entry };
  });
}

/**
 * Unlocks the chronicle (its holder or an ADMIN; idempotent when unlocked). The lock of a check-out
 * is released by check-in or cancel-check-out only (409).
 */
export async function unlock(scope: EntryScope, id: string): Promise<Entry> {
  return inChronicle(scope, id, `content '${id}' changed meanwhile`, async (tx, chronicle) => {
    const { rows, entry, latest } = chronicle;
    if (!latest.lockedBy) return { result: entry };
    await authorize(tx, 'unlock', chronicle);
    setChronicleLock(rows, null);
    await tx.em.flush();
    await recordEntryEvent(tx, 'ENTRY_UNLOCKED', entry);
    return { result: entry };
  });
}

/** Every CURRENT version of the chronicle of `id`, newest first unless `orderBy` says otherwise. */
export async function versions(scope: EntryScope, id: string, options: SearchOptions = {}): Promise<EntriesPage> {
  const entry = await requireEntry(scope, id, 'CONTENT');
  return runEntryQuery(
    scope,
    [{ sql: 'e.chronical_id = ?', params: [entry.chronicalId] }],
    {
      ...options,
      includeVersions: true,
      includeInactive: true,
      versionStatus: 'CURRENT',
      orderingDirection: options.orderingDirection ?? (options.orderBy === undefined ? OrderingDirection.desc : undefined),
    },
    'e.version_major {dir}, e.version_minor {dir}, e.created_at {dir}, e.id',
  );
}

/** The new bytes of replaceResource: `mimeType` defaults to the sniffed one. */
export interface ReplaceResourceInput {
  uploadId: string;
  mimeType?: string | null;
}

/**
 * New bytes as a new minor version (1.0 → 1.1), created directly as the latest CURRENT version; the
 * older versions keep their bytes. A working copy (anyone's) or another user's lock is a 409.
 */
export async function replaceResource(scope: EntryScope, id: string, input: ReplaceResourceInput): Promise<Entry> {
  const mimeType = optionalMediaType(input.mimeType);
  const replaced = await inChronicle(scope, id, `content '${id}' changed meanwhile`, async (tx, chronicle) => {
    await authorize(tx, 'replaceResource', chronicle);
    const { latest } = chronicle;
    const resource = await claimUpload(tx, input.uploadId, mimeType);
    latest.isLatest = false;
    await tx.em.flush();
    const next = newVersionRow(tx, latest, { ...nextVersion(latest, false), resourceId: resource.id });
    await tx.em.flush();
    await recordEntryEvent(tx, 'ENTRY_UPDATED', next, { changed: ['resource'], version: next.version });
    return { result: next };
  });
  requestTextExtraction(scope);
  requestThumbnail(scope, replaced);
  return replaced;
}
