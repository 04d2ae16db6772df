import type { Entry } from './entry.entity.js';

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
