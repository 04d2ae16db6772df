import { randomUUID } from 'node:crypto';
import { conflict } from '../../errors.js';
import { maxFolderLevels } from '../access/folder-policies.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, nameClash, reloaded } from './chronicles.js';
import { validateProperties, validateTags, withInherited } from './contents.js';
import { Entry } from './entry.entity.js';
import { validateEntryName } from './names.js';
import { requireParentFolderWithPolicies } from './queries.js';
import { readEntry, type EntryRead } from './read.js';
import type { EntryScope } from './scope.js';

/** A new folder: `parentId` absent, null or '' = the root; `tags` and `properties` are its own. */
export interface CreateFolderInput {
  name: string;
  parentId?: string | null;
  tags?: string[] | null;
  properties?: Record<string, unknown> | null;
}

/** A new folder, with its own tags and properties and those its parent's inheritance policy hands down. */
export async function createFolder(scope: EntryScope, input: CreateFolderInput): Promise<Entry> {
  const name = validateEntryName(input.name);
  const own = { tags: validateTags(input.tags), properties: validateProperties(input.properties) };
  const { parent, policies } = await requireParentFolderWithPolicies(scope, input.parentId);
  if (policies.level >= maxFolderLevels) throw conflict(`folder '${parent!.name}' lies ${maxFolderLevels} levels deep, the deepest a folder may: it cannot hold another folder`);
  const { tags, properties } = withInherited(parent, policies, own);
  const id = randomUUID();
  const now = new Date();
  await inTransaction(
    scope,
    async (tx) => {
      const folder = tx.em.create(Entry, {
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
        properties,
        tags,
      });
      await tx.em.flush();
      await recordEntryEvent(tx, 'ENTRY_CREATED', folder, { entryType: 'FOLDER', name, parentId: folder.parentId ?? null });
    },
    nameClash(name),
  );
  return reloaded(scope, id);
}

/** A folder the caller may read, with its parent as it may see it (the read verb, read.ts). */
export async function getFolder(scope: EntryScope, id: string): Promise<EntryRead> {
  return readEntry(scope, id, 'FOLDER');
}
