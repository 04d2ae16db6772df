import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventType } from './event-types.js';

/** One change as the outbox keeps it (DESIGN §11). `actor` is null for the service's own work (retention, sweeps). */
export interface EventInput {
  type: EventType;
  actor: string | null;
  repository?: { id: string; name: string } | null;
  entryId?: string | null;
  chronicalId?: string | null;
  details?: Record<string, unknown>;
}

/**
 * Writes one event row through `em`, which must be the change's own transaction: the event commits or
 * rolls back with the change (the transactional outbox). Called by every verb that changes something,
 * after its checks, so a refused request leaves none.
 */
export async function recordEvent(em: EntityManager, event: EventInput): Promise<void> {
  await em.execute(
    `insert into event (repository_id, repository, type, entry_id, chronical_id, actor, details) values (?, ?, ?, ?, ?, ?, ?::jsonb)`,
    [
      event.repository?.id ?? null,
      event.repository?.name ?? null,
      event.type,
      event.entryId ?? null,
      event.chronicalId ?? null,
      event.actor,
      JSON.stringify(event.details ?? {}),
    ],
  );
}
