import { illegalArguments } from '../../errors.js';
import { authorize } from '../access/policy.js';
import { recordEntryEvent } from '../events/record.js';
import { inTransaction, lockChronicle, reloaded, touch } from './chronicles.js';
import { maxTagsPerEntry, validateTags } from './contents.js';
import type { Entry } from './entry.entity.js';
import type { EntryScope } from './scope.js';

function requestedTags(tags: string[] | null | undefined): string[] {
  const list = validateTags(tags);
  if (list.length === 0) throw illegalArguments('tags: at least one tag is required');
  return list;
}

async function changeTags(scope: EntryScope, id: string, change: (tags: string[]) => string[]): Promise<Entry> {
  await inTransaction(scope, async (tx) => {
    const chronicle = await lockChronicle(tx, id);
    const { entry } = chronicle;
    await authorize(tx, 'tag', chronicle);
    const before = entry.tags ?? [];
    const after = change(before);
    if (after.length === before.length && after.every((tag, i) => tag === before[i])) return;
    if (after.length > maxTagsPerEntry) throw illegalArguments(`tags: an entry has at most ${maxTagsPerEntry} tags`);
    entry.tags = after;
    touch(tx, entry);
    await tx.em.flush();
    await recordEntryEvent(tx, 'ENTRY_TAGGED', entry, { added: after.filter((tag) => !before.includes(tag)), removed: before.filter((tag) => !after.includes(tag)) });
  });
  return reloaded(scope, id);
}

/** Adds tags to a content version (those it has already stay once). Another user's lock: 409. */
export async function addTags(scope: EntryScope, id: string, tags: string[]): Promise<Entry> {
  const added = requestedTags(tags);
  return changeTags(scope, id, (current) => [...new Set([...current, ...added])]);
}

/** Removes tags from a content version (tags it does not have are ignored). Another user's lock: 409. */
export async function removeTags(scope: EntryScope, id: string, tags: string[]): Promise<Entry> {
  const removed = new Set(requestedTags(tags));
  return changeTags(scope, id, (current) => current.filter((tag) => !removed.has(tag)));
}
