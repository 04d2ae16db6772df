import { conflict } from '../../errors.js';
import type { Entry } from './entry.entity.js';
import type { EntryScope } from './scope.js';

/**
 * A lock (or a check-out, which locks) held by another user blocks update, check-out, tagging and
 * deletion (DESIGN §5): a 409 naming the holder.
 */
export function assertNotLockedByOther(scope: EntryScope, entry: Entry): void {
  if (entry.lockedBy && entry.lockedBy !== scope.principal.userName) {
    throw conflict(`'${entry.name}' is locked by ${entry.lockedBy}`);
  }
}

/** Locks live on every row of a chronicle, so any version shows who holds it. */
export async function setChronicleLock(scope: EntryScope, chronicalId: string, lockedBy: string | null): Promise<void> {
  await scope.em.getConnection().execute(
    `update entry set locked_by = ?, locked_at = case when ?::text is null then null else now() end where chronical_id = ?`,
    [lockedBy, lockedBy, chronicalId],
    'run',
    scope.em.getTransactionContext(),
  );
}
