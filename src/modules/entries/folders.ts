import { randomUUID } from 'node:crypto';
import { conflict, isUniqueViolation } from '../../errors.js';
import { nameClash } from './chronicles.js';
import { Entry } from './entry.entity.js';
import { validateEntryName } from './names.js';
import { requireEntry, requireParentFolder } from './queries.js';
import type { EntryScope } from './scope.js';

export async function createFolder(scope: EntryScope, input: { name: string; parentId?: string | null }): Promise<Entry> {
  const name = validateEntryName(input.name);
  const parent = await requireParentFolder(scope, input.parentId);
  const id = randomUUID();
  const now = new Date();
  const folder = scope.em.create(Entry, {
    id,
    repositoryId: scope.repository.id,
    entryType: 'FOLDER',
    chronicalId: id,
    name,
    active: true,
    owner: scope.principal.userName,
    createdAt: now,
    createdBy: scope.principal.userName,
    lastModifiedAt: now,
    lastModifiedBy: scope.principal.userName,
    isLatest: true,
    parentId: parent?.id ?? null,
    properties: {},
    tags: [],
  });
  await flushNamed(scope, name);
  return folder;
}

export async function getFolder(scope: EntryScope, id: string): Promise<Entry> {
  return requireEntry(scope, id, 'FOLDER');
}

/** Flushes the unit of work, turning a clash with the unique-name index into a 409 that names the clash. */
export async function flushNamed(scope: EntryScope, name: string): Promise<void> {
  try {
    await scope.em.flush();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(nameClash(name));
    throw error;
  }
}
