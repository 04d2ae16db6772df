import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventSubscriber } from '@mikro-orm/core';
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';

/**
 * Statement timeouts of background work (jobs: JOB_STATEMENT_TIMEOUT_MS), applied without opening a
 * transaction of their own: MikroORM's transactions run on kysely's ControlledTransaction, which keeps
 * a connection from the pool for good when its rollback fails on a connection Postgres ended (kysely
 * issue #1990; `orm.close()` then waits forever). So a timeout is set in the transactions the work
 * opens anyway, and a lone statement that needs one (`executeBounded`) carries it in its own message.
 */
const timeouts = new AsyncLocalStorage<number>();

/** Runs `work` with every transaction it opens through MikroORM, and every `executeBounded` statement, bounded by `timeoutMs`. */
export function withStatementTimeout<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
  return timeouts.run(Math.floor(timeoutMs), work);
}

/** The bound of the work running now (withStatementTimeout), if any. */
export const currentStatementTimeout = (): number | undefined => timeouts.getStore();

/** Sets the bound of the work running now (withStatementTimeout) as each of its transactions begins (`set local`, undone with it). */
export const statementTimeouts: EventSubscriber = {
  async afterTransactionStart({ em, transaction }) {
    const timeoutMs = timeouts.getStore();
    if (timeoutMs !== undefined && transaction) await em.getConnection().execute(`set local statement_timeout = ${timeoutMs}`, [], 'run', transaction);
  },
};

/**
 * Runs one statement through `em` (as em.execute: `?` placeholders, rows as it answers them) under the
 * bound of the work running now. Outside a transaction it goes to the ORM's pool as one simple-query
 * message, `set local statement_timeout = …; <statement>`, which Postgres runs as one implicit
 * transaction; its values are inlined as em.execute inlines them.
 */
export async function executeBounded<T>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const timeoutMs = timeouts.getStore();
  if (timeoutMs === undefined || em.isInTransaction()) return em.execute<T[]>(sql, params);
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  const results = (await pool.query(`set local statement_timeout = ${timeoutMs}; ${em.getPlatform().formatQuery(sql, params)}`)) as unknown as { rows: T[] }[];
  return results.at(-1)!.rows;
}
