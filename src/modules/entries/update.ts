import { conflict, illegalArguments } from '../../errors.js';
import { requireFolderDepthAllowed, requireTypeAllowedIn, requireTypesAllowedBelow } from '../access/folder-policies.js';
import { recomputeAcls } from '../access/acl-operations.js';
import { authorize } from '../access/policy.js';
import type { EventType } from '../events/event-types.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, lockChronicle, lockFolderTree, nameClash, nameTaken, reloaded, touch } from './chronicles.js';
import { boundedProperties, validateProperties, validateTags } from './contents.js';
import { Entry } from './entry.entity.js';
import { validateEntryName, validateTypeName } from './names.js';
import { requireEntry, requireParentFolder } from './queries.js';
import type { EntryScope } from './scope.js';

/**
 * What PATCH may change of an entry. `undefined` = leave as is; `name` null is refused. `parentId`
 * null or '' = move to the root. `properties` is merged into the stored ones (RFC 7396 at the top
 * level: a key given `null` is removed; `properties: null` removes them all).
 */
interface EntryChanges {
  name?: string | null;
  parentId?: string | null;
  properties?: Record<string, unknown> | null;
}

/** `typeName` null or '' = no type. */
export interface UpdateContentInput extends EntryChanges {
  typeName?: string | null;
}

/** `tags` replace the folder's: null or [] = none. */
export interface UpdateFolderInput extends EntryChanges {
  tags?: string[] | null;
}

/** A name is changed or left alone (absent), never removed: null is refused in both APIs. */
function newName(name: string | null | undefined): string | undefined {
  if (name === null) throw illegalArguments('name must not be null: leave it out to keep the name');
  return name === undefined ? undefined : validateEntryName(name);
}

const given = <T>(value: T | null | undefined): value is T | null => value !== undefined;

function mergedProperties(stored: Record<string, unknown>, patch: Record<string, unknown> | null): Record<string, unknown> {
  if (patch === null) return {};
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/**
 * Renames, moves, retypes or re-describes a content: the same version changes (no new version),
 * `lastModifiedAt/By` are set. A move carries the whole chronicle (every version and the working copy
 * live in one folder). 409 when another user holds the lock, when the addressed version is an earlier
 * one, or when the name is taken in the target folder; 404 when the target folder does not exist.
 */
export async function updateContent(scope: EntryScope, id: string, input: UpdateContentInput): Promise<Entry> {
  const name = newName(input.name);
  const patch = input.properties;
  if (patch) validateProperties(patch);
  const typeName = validateTypeName(input.typeName);
  let finalName = name ?? '';
  await inTransaction(
    scope,
    async (tx) => {
      // a move changes the tree: the tree's lock comes before the chronicle's (the one lock order)
      if (given(input.parentId)) await lockFolderTree(tx);
      const chronicle = await lockChronicle(tx, id);
      const { entry, rows } = chronicle;
      finalName = entry.name;
      await authorize(tx, 'update', chronicle);
      if (name === undefined && !given(input.parentId) && typeName === undefined && patch === undefined) return;
      const now = new Date();
      const fromFolderId = entry.parentId ?? null;
      if (given(input.parentId)) {
        const parent = await requireParentFolder(tx, input.parentId);
        for (const row of rows) {
          row.parentId = parent?.id ?? null;
          if (row.isLatest) touch(tx, row, now);
        }
      }
      if (name !== undefined) entry.name = name;
      // the unique index guards latest versions: a clash there is the latest version's name (through a
      // working copy, a move carries the latest version under its own name)
      finalName = chronicle.latest.name;
      if (typeName !== undefined) entry.typeName = typeName;
      if (given(input.parentId) || typeName !== undefined) await requireTypeAllowedIn(tx.em, entry.parentId, entry.typeName ?? null);
      if (patch !== undefined) entry.properties = boundedProperties(mergedProperties(entry.properties ?? {}, patch));
      touch(tx, entry, now);
      // the unique index guards latest versions; a working copy's name is checked here, since its
      // check-in would clash
      if (entry.versionStatus === 'WORKING_COPY' && (await nameTaken(tx, entry.parentId ?? null, entry.name, entry.chronicalId))) {
        throw conflict(nameClash(entry.name));
      }
      await tx.em.flush();
      // a moved content inherits from its new folder
      if (given(input.parentId)) await recomputeAcls(tx.em, tx.repository.id, rows.map((row) => row.id));
      await recordEntryEvent(tx, ...changeEvent(fromFolderId, entry, { name, parentId: input.parentId, typeName, properties: patch }));
    },
    () => nameClash(finalName),
  );
  return reloaded(scope, id);
}

/**
 * Renames or moves a folder (with everything below it), or sets its tags and properties (what an
 * inheritance policy hands down to entries created in it from then on). Moving a folder into itself or
 * into one of its own subfolders is a 409 (the request is well-formed; the tree makes it impossible),
 * and so is moving it where a type restriction refuses a content it holds.
 */
export async function updateFolder(scope: EntryScope, id: string, input: UpdateFolderInput): Promise<Entry> {
  const name = newName(input.name);
  const tags = input.tags === undefined ? undefined : validateTags(input.tags);
  const patch = input.properties;
  if (patch) validateProperties(patch);
  let finalName = name ?? '';
  await inTransaction(
    scope,
    async (tx) => {
      await lockFolderTree(tx);
      const folder = await requireEntry(tx, id, 'FOLDER');
      await authorize(tx, 'update', { entry: folder });
      finalName = folder.name;
      if (name === undefined && !given(input.parentId) && tags === undefined && patch === undefined) return;
      const fromFolderId = folder.parentId ?? null;
      if (given(input.parentId)) {
        const parent = await requireParentFolder(tx, input.parentId);
        if (parent && (await isInSubtree(tx, parent.id, folder.id))) {
          throw conflict(
            parent.id === folder.id
              ? `folder '${folder.name}' cannot be moved into itself`
              : `folder '${folder.name}' cannot be moved into its own subfolder '${parent.name}'`,
          );
        }
        await requireFolderDepthAllowed(tx.em, folder, parent?.id ?? null);
        folder.parentId = parent?.id ?? null;
      }
      if (name !== undefined) folder.name = finalName = name;
      if (tags !== undefined) folder.tags = tags;
      if (patch !== undefined) folder.properties = boundedProperties(mergedProperties(folder.properties ?? {}, patch));
      touch(tx, folder);
      await tx.em.flush();
      if (given(input.parentId)) {
        await requireTypesAllowedBelow(tx.em, folder.id, folder.parentId ?? null);
        // the folder and everything below it inherit from the new place (one statement set: acl_recompute)
        await recomputeAcls(tx.em, tx.repository.id, [folder.id]);
      }
      await recordEntryEvent(tx, ...changeEvent(fromFolderId, folder, { name, parentId: input.parentId, tags, properties: patch }));
    },
    () => nameClash(finalName),
  );
  return reloaded(scope, id);
}

/**
 * The one event of a PATCH: ENTRY_MOVED when the entry left its folder (the other fields it changed
 * listed too), else ENTRY_UPDATED; `details.changed` names the fields the request set.
 */
function changeEvent(
  fromFolderId: string | null,
  entry: Entry,
  fields: Record<string, unknown>,
): [EventType, Entry, Record<string, unknown>] {
  const changed = Object.keys(fields).filter((field) => fields[field] !== undefined);
  const toFolderId = entry.parentId ?? null;
  if (toFolderId !== fromFolderId) return ['ENTRY_MOVED', entry, { fromFolderId, toFolderId, changed }];
  return ['ENTRY_UPDATED', entry, { changed }];
}

/** Whether `folderId` is `rootId` or lies below it: walks up from `folderId` (a recursive CTE). */
async function isInSubtree(scope: EntryScope, folderId: string, rootId: string): Promise<boolean> {
  const rows = await scope.em.execute<{ id: string }[]>(
    `with recursive ancestors(id, parent_id) as (
        select id, parent_id from entry where id = ?
        union
        select e.id, e.parent_id from entry e join ancestors a on e.id = a.parent_id
      )
      select id from ancestors where id = ? limit 1`,
    [folderId, rootId],
  );
  return rows.length > 0;
}
