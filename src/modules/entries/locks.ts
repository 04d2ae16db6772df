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

/**
 * Locks live on every row of a chronicle, so any version shows who holds it. `rows`: the chronicle as
 * `lockChronicle` loaded it; the caller's flush writes the change.
 */
export function setChronicleLock(rows: Entry[], lockedBy: string | null, now = new Date()): void {
  for (const row of rows) {
    row.lockedBy = lockedBy;
    row.lockedAt = lockedBy ? now : null;
  }
}
