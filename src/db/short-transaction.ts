import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import { currentStatementTimeout } from './statement-timeout.js';

/** A statement with `?` placeholders and their values (as em.execute takes them). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * A short transaction in two messages to Postgres, on a connection of the ORM's pool but outside the
 * ORM: `begin` (with the statement timeout of the work running now, withStatementTimeout) and `first`
 * in one message; then `between` with `first`'s rows, while its locks are held (a file placed); then
 * `rest` and `commit` in the second message. Values are inlined as em.execute and executeBounded inline
 * them. A failure anywhere rolls back; a connection whose rollback fails is ended, not pooled again.
 *
 * Home-made where a benchmark shows the need (the conversion job path stores every page this way): the
 * same transaction through MikroORM (a fork, kysely's controlled transaction, begin, the timeout, the
 * statements one by one, commit) was six round trips, and a large part of the service's CPU a page
 * (docs/benchmarks.md, "conversion — the job path's page store").
 */
export async function shortTransaction<R, T>(em: EntityManager, first: Statement, between: (rows: R[]) => Promise<T>, rest: Statement[]): Promise<T> {
  const platform = em.getPlatform();
  const inline = ({ sql, params }: Statement) => platform.formatQuery(sql, params);
  const timeoutMs = currentStatementTimeout();
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const opened = (await client.query(`begin;${timeoutMs === undefined ? '' : ` set local statement_timeout = ${timeoutMs};`} ${inline(first)}`)) as unknown as { rows: R[] }[];
    const result = await between(opened.at(-1)!.rows);
    await client.query([...rest.map(inline), 'commit'].join(';\n'));
    return result;
  } catch (error) {
    // a connection whose rollback failed is in a state nobody knows: it is ended, not pooled again
    await client.query('rollback').catch((rollbackFailed: Error) => {
      broken = rollbackFailed;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
