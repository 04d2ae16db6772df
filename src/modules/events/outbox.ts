import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventType } from './event-types.js';

/** One committed event as readers get it (DESIGN §11): the audit trail, the live feed, webhook bodies. */
export interface OutboxEvent {
  id: string;
  at: Date;
  /** the repository's name (null: not about a repository, such as a login) */
  repository: string | null;
  type: EventType;
  entryId: string | null;
  chronicalId: string | null;
  actor: string | null;
  details: Record<string, unknown>;
}

/** The columns of an `event` row as an OutboxEvent, for a select over the table aliased `ev`. */
export const outboxEventColumns = `ev.id::text as id, ev.at, ev.repository, ev.type, ev.entry_id as "entryId", ev.chronical_id as "chronicalId", ev.actor, ev.details`;

/** A row selected with `outboxEventColumns`. */
export type OutboxEventRow = Omit<OutboxEvent, 'at'> & { at: string | Date };
export const outboxEventOf = (row: OutboxEventRow): OutboxEvent => ({ ...row, at: new Date(row.at) });

/** The event with this id (undefined when retention removed it meanwhile). */
export async function readEvent(em: EntityManager, id: string): Promise<OutboxEvent | undefined> {
  const [row] = await em.execute<OutboxEventRow[]>(`select ${outboxEventColumns} from event ev where ev.id = ?`, [id]);
  return row && outboxEventOf(row);
}
