import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import { numbered } from './placeholders.js';

/** Each statement's numbered text, by its name (made once: these run on every upload). */
const texts = new Map<string, string>();

/**
 * Runs a statement of the upload path (`?` placeholders, as em.execute takes them; no `?` elsewhere in
 * the text) as a named prepared statement on the ORM's own pool: Postgres parses and plans it once per
 * connection instead of on every call, and the ORM's formatting of the values into the text is
 * skipped. `name` stands for this text only. Inside a transaction it runs through `em`, on the
 * transaction's connection. Rows come back as em.execute gives them (the pool's type parsers).
 */
export async function executePrepared<T>(em: EntityManager, name: string, sql: string, params: unknown[]): Promise<T[]> {
  if (em.isInTransaction()) return em.execute<T[]>(sql, params);
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  let text = texts.get(name);
  if (text === undefined) texts.set(name, (text = numbered(sql)));
  const result = await pool.query({ name, text, values: params });
  return result.rows as T[];
}

/** The names preparedName gave, by text. */
const names = new Map<string, string>();

/**
 * A prepared statement's name for `sql`, one name per distinct text (pg refuses a name given again for
 * another text on a connection). The texts must come from the code, never from values (the map keeps
 * every one).
 */
export function preparedName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) names.set(sql, (name = `text-${names.size + 1}`));
  return name;
}

/** executePrepared for a statement assembled from parts (a job record's change: its assignments, its condition): named after its text. */
export function executePreparedText<T>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  return executePrepared<T>(em, preparedName(sql), sql, params);
}
