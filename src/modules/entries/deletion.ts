import { conflict, notFound } from '../../errors.js';
import { authorize } from '../access/policy.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, lockChronicle, lockFolderTree, nameClash, reloaded, type LockedChronicle } from './chronicles.js';
import { Entry } from './entry.entity.js';
import { setChronicleLock } from './locks.js';
import { requireEntry } from './queries.js';
import type { EntryScope } from './scope.js';
import { removeRepresentationFiles, removeUnreferencedResources, takeRepresentations } from './uploads.js';

/**
 * Deletes a content. Without `permanent` the whole chronicle is deactivated (`active = false`): hidden
 * from searches, home and folder listings, still readable by id, restorable. With `permanent` every
 * version and the working copy are removed, and their bytes once no remaining version refers to them.
 * A lock held by another user blocks both (409). Deactivating a deactivated content does nothing.
 * Deleting a working copy (its id) cancels the check-out, as in CMIS: the working copy goes, the
 * chronicle is unlocked, the versions stay (its holder or an administrator, like cancel-check-out).
 */
export async function deleteContent(scope: EntryScope, id: string, options: { permanent?: boolean | null } = {}): Promise<void> {
  const { resourceIds, pageImages } = await inTransaction(scope, async (tx) => {
    const chronicle = await lockChronicle(tx, id);
    const { entry } = chronicle;
    if (entry === chronicle.workingCopy) {
      await authorize(tx, 'cancelCheckOut', chronicle);
      const discarded = await discardWorkingCopy(tx, chronicle);
      await recordEntryEvent(tx, 'CONTENT_CHECK_OUT_CANCELLED', entry);
      return discarded;
    }
    await authorize(tx, 'delete', { entry });
    if (options.permanent) {
      const rowsOfChronicle = [entry.chronicalId, tx.repository.id];
      const pageImages = await takeRepresentations(tx.em, 'select id from entry where chronical_id = ? and repository_id = ?', rowsOfChronicle);
      const deleted = await tx.em.execute<{ resource_id: string | null }[]>(
        `delete from entry where chronical_id = ? and repository_id = ? returning resource_id`,
        rowsOfChronicle,
      );
      await recordEntryEvent(tx, 'ENTRY_PURGED', entry, { entryType: 'CONTENT', name: entry.name, versions: deleted.length });
      return { resourceIds: deleted.map((row) => row.resource_id), pageImages };
    }
    if (entry.active) {
      await setChronicleActive(tx, entry.chronicalId, false);
      await recordEntryEvent(tx, 'ENTRY_DELETED', entry);
    }
    return { resourceIds: [], pageImages: [] };
  });
  // the rows are gone (committed): now the bytes nobody refers to
  await removeUnreferencedResources(scope, resourceIds);
  await removeRepresentationFiles(scope, pageImages);
}

/**
 * Removes the chronicle's working copy (cancel-check-out) and unlocks its versions. Answers what may be
 * removed once committed: its resource (unless the latest version shares it) and its page images.
 */
export async function discardWorkingCopy(tx: EntryScope, chronicle: LockedChronicle): Promise<{ resourceIds: (string | null)[]; pageImages: string[] }> {
  const { rows, latest } = chronicle;
  const workingCopy = chronicle.workingCopy!;
  const pageImages = await takeRepresentations(tx.em, 'select ?::text', [workingCopy.id]);
  const resource = workingCopy.resourceId ?? null;
  tx.em.remove(workingCopy);
  setChronicleLock(rows.filter((row) => row !== workingCopy), null);
  await tx.em.flush();
  return { resourceIds: resource !== latest.resourceId ? [resource] : [], pageImages };
}

/**
 * Makes a deactivated content active again (every row of its chronicle). 409 when an active entry has
 * taken its name in its folder meanwhile (rename it with PATCH first: a deactivated content may be
 * renamed), or when its folder is deactivated; a folder deleted since has taken the content with it
 * (404). Restoring an active content answers it unchanged.
 */
export async function restoreContent(scope: EntryScope, id: string): Promise<Entry> {
  let name = '';
  await inTransaction(
    scope,
    async (tx) => {
      const { entry } = await lockChronicle(tx, id);
      name = entry.name;
      if (entry.active) return;
      await authorize(tx, 'restore', { entry });
      if (entry.parentId) {
        const parent = await tx.em.findOne(Entry, { id: entry.parentId, repositoryId: tx.repository.id });
        if (!parent) throw notFound(`the folder of '${entry.name}' no longer exists`);
        if (!parent.active) throw conflict(`the folder '${parent.name}' of '${entry.name}' is deactivated`);
      }
      await setChronicleActive(tx, entry.chronicalId, true);
      await recordEntryEvent(tx, 'ENTRY_RESTORED', entry);
    },
    () => nameClash(name),
  );
  return reloaded(scope, id);
}

async function setChronicleActive(tx: EntryScope, chronicalId: string, active: boolean): Promise<void> {
  await tx.em.execute(
    `update entry set active = ?,
        last_modified_at = case when is_latest then now() else last_modified_at end,
        last_modified_by = case when is_latest then ? else last_modified_by end
      where chronical_id = ? and repository_id = ?`,
    [active, tx.principal.userName, chronicalId, tx.repository.id],
    'run',
  );
}

/**
 * Deletes a folder permanently, with its subtree. Without `recursive` the folder must be empty: it may
 * hold no entry, active or deactivated (restorable), 409 otherwise. With `recursive`
 * every subfolder goes and every content below is purged (all versions; bytes once unreferenced). A
 * content below that another user has locked (or checked out) blocks the whole deletion (409).
 */
export async function deleteFolder(scope: EntryScope, id: string, options: { recursive?: boolean | null } = {}): Promise<void> {
  const { resourceIds, pageImages } = await inTransaction(scope, async (tx) => {
    await lockFolderTree(tx);
    const folder = await requireEntry(tx, id, 'FOLDER');
    await authorize(tx, 'delete', { entry: folder });
    const subtree = await tx.em.execute<{ id: string }[]>(
      `with recursive subtree(id) as (
          select id from entry where id = ?
          union
          select e.id from entry e join subtree s on e.parent_id = s.id where e.entry_type = 'FOLDER'
        )
        select id from subtree`,
      [folder.id],
    );
    const folderIds = subtree.map((row) => row.id);
    // the folders first: nothing new can be created or moved into them until the end
    await tx.em.execute(`select id from entry where id = any(array[?]::text[]) order by id for update`, [folderIds]);
    const inside = (
      await tx.em.execute<Record<string, unknown>[]>(`select * from entry where parent_id = any(array[?]::text[]) order by id for update`, [folderIds])
    ).map((row) => tx.em.map(Entry, row));
    if (!options.recursive) {
      const visible = inside.filter((row) => row.active);
      if (visible.length > 0) {
        // counted as the folder's children list counts them: its own children, latest versions, no working copies
        const listed = visible.filter((row) => row.parentId === folder.id && row.isLatest && row.versionStatus !== 'WORKING_COPY').length;
        throw conflict(`folder '${folder.name}' is not empty (${listed} ${listed === 1 ? 'entry' : 'entries'}): delete it recursively (REST recursive=true, GraphQL recursive: true)`);
      }
      // deactivated contents can still be restored: only an explicit recursive deletion purges them
      const restorable = inside.filter((row) => !row.active && row.isLatest).length;
      if (restorable > 0) {
        throw conflict(
          `folder '${folder.name}' holds ${restorable} deactivated ${restorable === 1 ? 'content' : 'contents'} that can still be restored (a search for active = false finds them): restore them, or delete the folder recursively (REST recursive=true, GraphQL recursive: true) to purge them`,
        );
      }
    }
    for (const entry of inside) await authorize(tx, 'delete', { entry });
    const pageImages = await takeRepresentations(tx.em, `select id from entry where parent_id = any(array[?]::text[]) and entry_type = 'CONTENT'`, [folderIds]);
    await tx.em.execute(`delete from entry where parent_id = any(array[?]::text[]) and entry_type = 'CONTENT'`, [folderIds], 'run');
    await tx.em.execute(`delete from entry where id = any(array[?]::text[])`, [folderIds], 'run');
    // one event for the subtree: what went with the folder is counted
    await recordEntryEvent(tx, 'ENTRY_PURGED', folder, {
      entryType: 'FOLDER',
      name: folder.name,
      folders: folderIds.length - 1,
      contents: inside.filter((row) => row.entryType === 'CONTENT' && row.isLatest && row.versionStatus !== 'WORKING_COPY').length,
    });
    return { resourceIds: inside.map((entry) => entry.resourceId), pageImages };
  });
  await removeUnreferencedResources(scope, resourceIds);
  await removeRepresentationFiles(scope, pageImages);
}
