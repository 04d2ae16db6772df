import { illegalArguments } from '../../errors.js';
import { authorize, authorizeAtRoot, entryNotFound, mayRead, type EntryFacts } from '../access/policy.js';
import { Entry, Resource, type EntryType } from './entry.entity.js';
import type { EntryScope } from './scope.js';
import { folderPolicies, folderWithPolicies, type FolderPolicies } from '../access/folder-policies.js';
import { plainSelect, type PlainRecord } from '../../db/plain-rows.js';

/** Loads one entry of the scope's repository that the caller may read, or a 404 naming what was asked (the same for one it may not read). */
export async function requireEntry(scope: EntryScope, id: string, expected?: EntryType): Promise<Entry> {
  return requireReadable(scope, id, await scope.em.findOne(Entry, { id, repositoryId: scope.repository.id }), expected);
}

/** The entry found for `id` (of the scope's repository) if it is of the kind `expected` and the caller may read it; else the 404 naming what was asked (the same for one it may not read). */
export async function requireReadable<E extends EntryFacts>(scope: EntryScope, id: string, entry: E | null | undefined, expected?: EntryType): Promise<E> {
  const kind = expected === 'FOLDER' ? 'folder' : expected === 'CONTENT' ? 'content' : 'entry';
  if (!entry || (expected && entry.entryType !== expected) || !(await mayRead(scope, entry))) throw entryNotFound(kind, id, scope.repository);
  return entry;
}

/**
 * A folder that can hold new entries: active, in this repository, and one the caller may write (DESIGN
 * §10: creating, moving and copying into a folder need `write` on it; at the root, on the root's ACL).
 * A 400 names the parameter; a folder the caller may not read is a 404, one it may only read a 403.
 */
export async function requireParentFolder(scope: EntryScope, parentId: string | null | undefined, field = 'parentId'): Promise<Entry | null> {
  if (parentId === undefined || parentId === null || parentId === '') {
    authorizeAtRoot(scope);
    return null;
  }
  return usableParent(scope, await scope.em.findOne(Entry, { id: parentId, repositoryId: scope.repository.id, entryType: 'FOLDER' }), parentId, field);
}

/** The parent folder as `requireParentFolder` finds it, with the policies in effect there, in one query (uploads, copies, new folders). */
export async function requireParentFolderWithPolicies(scope: EntryScope, parentId: string | null | undefined): Promise<{ parent: PlainRecord<Entry> | null; policies: FolderPolicies }> {
  if (parentId === undefined || parentId === null || parentId === '') {
    authorizeAtRoot(scope);
    return { parent: null, policies: await folderPolicies(scope.em, null) };
  }
  const found = await folderWithPolicies(scope.em, parentId, scope.repository.id);
  const parent = await usableParent(scope, found?.folder ?? null, parentId, 'parentId');
  return { parent, policies: found!.policies };
}

async function usableParent<F extends EntryFacts>(scope: EntryScope, folder: F | null, parentId: string, field: string): Promise<F> {
  if (!folder || !(await mayRead(scope, folder))) throw entryNotFound(`${field}: folder`, parentId, scope.repository);
  await authorize(scope, 'fileInto', { entry: folder });
  if (!folder.active) throw illegalArguments(`${field}: folder '${parentId}' is deactivated`);
  return folder;
}

/**
 * Rows by id for nested fields of an answer: those this request's unit of work already holds
 * (current: a forked transaction clears it when it commits), the others in one query as plain records
 * (read-only: no entities to hydrate for a page's parents and resources).
 */
async function loadByIds<T extends Entry | Resource>(scope: Pick<EntryScope, 'em'>, type: new () => T, ids: readonly string[]): Promise<Map<string, T | PlainRecord<T>>> {
  const unitOfWork = scope.em.getUnitOfWork();
  const found = new Map<string, T | PlainRecord<T>>();
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const known = unitOfWork.getById<T>(type, id as never);
    if (known) found.set(id, known);
    else missing.push(id);
  }
  if (missing.length > 0) {
    const { sql, revive } = plainSelect(scope.em, type, 't');
    const table = scope.em.getMetadata().get(type).tableName;
    for (const row of await scope.em.execute<Record<string, unknown>[]>(`select ${sql} from ${table} t where t.id in (?)`, [missing])) {
      const record = revive(row);
      found.set(record.id as string, record);
    }
  }
  return found;
}

export const loadEntries = (scope: Pick<EntryScope, 'em'>, ids: readonly string[]) => loadByIds(scope, Entry, ids);
export const loadResources = (scope: Pick<EntryScope, 'em'>, ids: readonly string[]) => loadByIds(scope, Resource, ids);
