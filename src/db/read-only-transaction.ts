import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * Runs `work` in a read-only, repeatable-read transaction (one snapshot) on a connection of the ORM's
 * own pool, held for it: pg's client itself, so that its statements may be named (prepared once per
 * connection; pg keeps each connection's names), which Kysely's transactions cannot. Committed when
 * `work` resolves, rolled back when anything throws; a connection that could not roll back is
 * discarded instead of returned to the pool.
 */
export async function readOnlyTransaction<T>(em: EntityManager, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('start transaction isolation level repeatable read read only');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch((failed: Error) => (broken = failed));
    throw error;
  } finally {
    client.release(broken);
  }
}
