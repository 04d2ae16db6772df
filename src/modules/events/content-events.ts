import type { EntityManager } from '@mikro-orm/postgresql';
import { mayReadEvent } from '../access/policy.js';
import { Entry } from '../entries/entry.entity.js';
import { getFolder } from '../entries/folders.js';
import type { EntryScope } from '../entries/scope.js';
import type { OutboxEvent } from './outbox.js';

/**
 * Whether an event belongs to the folder a subscriber watches: its entry lies directly in the folder
 * (not deeper), or it was moved out of it.
 */
const inFolder = (event: OutboxEvent, entry: Entry | null, folderId: string) => entry?.parentId === folderId || event.details['fromFolderId'] === folderId;

/**
 * The events committed in the scope's repository from now on that the caller may read (the policy's
 * `mayReadEvent`, asked of each entry as it is when the event is relayed), only those of `folderId`
 * when given (a folder the caller must be able to read: else a 404 at once). Watching has begun when
 * the promise resolves.
 */
export async function watchContentEvents(scope: EntryScope, folderId: string | undefined): Promise<AsyncGenerator<OutboxEvent>> {
  if (folderId !== undefined) await getFolder(scope, folderId);
  const committed = scope.services.liveEvents.watch(scope.repository.id);
  return (async function* visible() {
    try {
      for await (const event of committed) {
        // a fresh unit of work per event: the entry and its ACL as they are now
        const em = scope.em.fork() as EntityManager;
        const entry = event.entryId ? await em.findOne(Entry, { id: event.entryId }) : null;
        if (folderId !== undefined && !inFolder(event, entry, folderId)) continue;
        if (await mayReadEvent({ ...scope, em }, entry)) yield event;
      }
    } finally {
      await committed.return?.();
    }
  })();
}
