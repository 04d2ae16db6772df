import type { EntityManager } from '@mikro-orm/postgresql';

/** Tables whose rows a caller asks after by id. */
type TableWithId = 'entry' | 'resource' | 'representation';

/** Those of `ids` that have no row in `table` (purged, or never committed), in one lookup by primary key. */
export async function missingRows(em: EntityManager, table: TableWithId, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await em.getConnection().execute<{ id: string }[]>(`select id from ${table} where id = any(array[?]::text[])`, [ids]);
  const present = new Set(found.map((row) => row.id));
  return new Set(ids.filter((id) => !present.has(id)));
}
