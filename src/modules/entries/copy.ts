import { conflict, notFound, ServiceError } from '../../errors.js';
import { StoredFileUnavailableError } from '../../storage/store.js';
import { checkTypeAllowed } from '../access/folder-policies.js';
import { authorize } from '../access/policy.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, nameClash, nameTaken, reloaded } from './chronicles.js';
import { firstVersion, withInherited } from './contents.js';
import { Resource, type Entry } from './entry.entity.js';
import { validateEntryName } from './names.js';
import { requireEntry, requireParentFolderWithPolicies } from './queries.js';
import type { EntryScope } from './scope.js';
import { claimUpload, discardUpload, insertPendingResource } from './uploads.js';
import { requestTextExtraction } from '../fulltext/operations.js';
import { requestThumbnail } from '../conversion/thumbnails.js';

/** Where a copy goes and what it is called. */
export interface CopyContentInput {
  /** undefined: the folder of the original; null or '': the root */
  parentId?: string | null;
  /** default: the name of the original (so a copy into the same folder needs a new name: 409 otherwise) */
  name?: string | null;
}

/**
 * A new chronicle from one version of a content: version 1.0, CURRENT, new ids, the caller as owner,
 * the original's type (or, untyped, the target folder's default type), tags and properties (with what
 * the target folder's inheritance policy hands down), and its own copy of the bytes (a new resource; purging
 * the original leaves the copy whole). A lock on the original does not block copying.
 *
 * The bytes are copied under a *pending* resource row (like an upload), which the new entry takes over
 * in its transaction: a crash leaves nothing visible, only a pending row that the start-up sweep removes.
 */
export async function copyContent(scope: EntryScope, id: string, input: CopyContentInput = {}): Promise<Entry> {
  const source = await requireEntry(scope, id, 'CONTENT');
  await authorize(scope, 'copy', { entry: source });
  const name = validateEntryName(input.name ?? source.name);
  const { parent, policies } = await requireParentFolderWithPolicies(scope, input.parentId === undefined ? source.parentId : input.parentId);
  const parentId = parent?.id ?? null;
  // a new chronicle in the target folder: an untyped original's copy gets the folder's default type,
  // and the copy what the folder hands down, as an upload there would
  const typeName = source.typeName || policies.defaultTypeName;
  if (parent) await checkTypeAllowed(scope.em, policies, typeName, parent.name);
  const { tags, properties } = withInherited(parent, policies, { tags: source.tags ?? [], properties: source.properties ?? {} });
  // cheap before copying the bytes; the unique index decides in the end
  if (await nameTaken(scope, parentId, name)) throw conflict(nameClash(name));
  const original = source.resourceId ? await scope.em.findOne(Resource, { id: source.resourceId }) : null;
  if (!original) throw notFound(`content '${source.id}' has no resource to copy`);

  const { contentStore } = scope.services;
  // the copy's bytes are handled like an upload: a pending resource the new version claims
  const { name: fileName, mimeType, fileSize, md5 } = original;
  const resource = await insertPendingResource(scope, { name: fileName, mimeType, fileSize, md5 });
  let copyId = '';
  try {
    try {
      await contentStore.copy(original.storagePath, resource.storagePath);
    } catch (error) {
      if (error instanceof StoredFileUnavailableError) {
        throw new ServiceError('unavailable', `the bytes of content '${source.id}' are missing from the content store`);
      }
      throw error;
    }
    await inTransaction(
      scope,
      async (tx) => {
        await claimUpload(tx, resource.id);
        const copy = firstVersion(scope, tx.em, {
          name,
          parentId,
          resourceId: resource.id,
          typeName,
          properties: { ...properties },
          tags: [...tags],
        });
        copyId = copy.id;
        await tx.em.flush();
        await recordEntryEvent(tx, 'ENTRY_CREATED', copy, { entryType: 'CONTENT', name, parentId, copiedFrom: source.id });
      },
      () => nameClash(name),
    );
  } catch (error) {
    await discardUpload(scope, resource.id);
    throw error;
  }
  // the claim queued the copy's bytes for their text, as any new version's
  requestTextExtraction(scope);
  const copy = await reloaded(scope, copyId);
  requestThumbnail(scope, copy);
  return copy;
}
