import { notFound, illegalArguments } from '../../errors.js';
import { Entry, Resource, type EntryType } from './entry.entity.js';
import type { EntryScope } from './scope.js';

/** Loads one entry of the scope's repository, or a 404 naming what was asked. */
export async function requireEntry(scope: EntryScope, id: string, expected?: EntryType): Promise<Entry> {
  const entry = await scope.em.findOne(Entry, { id, repositoryId: scope.repository.id });
  const kind = expected === 'FOLDER' ? 'folder' : expected === 'CONTENT' ? 'content' : 'entry';
  if (!entry || (expected && entry.entryType !== expected)) throw notFound(`${kind} '${id}' not found in repository '${scope.repository.name}'`);
  return entry;
}

/** A folder that can hold new entries: active and in this repository (a 400 names the parameter). */
export async function requireParentFolder(scope: EntryScope, parentId: string | null | undefined, field = 'parentId'): Promise<Entry | null> {
  if (parentId === undefined || parentId === null || parentId === '') return null;
  const folder = await scope.em.findOne(Entry, { id: parentId, repositoryId: scope.repository.id, entryType: 'FOLDER' });
  if (!folder) throw notFound(`${field}: folder '${parentId}' not found in repository '${scope.repository.name}'`);
  if (!folder.active) throw illegalArguments(`${field}: folder '${parentId}' is deactivated`);
  return folder;
}

export async function loadEntries(scope: Pick<EntryScope, 'em'>, ids: readonly string[]): Promise<Map<string, Entry>> {
  const rows = ids.length ? await scope.em.find(Entry, { id: { $in: [...new Set(ids)] } }) : [];
  return new Map(rows.map((row) => [row.id, row]));
}

export async function loadResources(scope: Pick<EntryScope, 'em'>, ids: readonly string[]): Promise<Map<string, Resource>> {
  const rows = ids.length ? await scope.em.find(Resource, { id: { $in: [...new Set(ids)] } }) : [];
  return new Map(rows.map((row) => [row.id, row]));
}
