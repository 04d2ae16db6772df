import pg from 'pg';
import type { Logger } from '../logger.js';
import { answerInCallbackForm } from './callback-queries.js';
import { endPool } from './end-pool.js';

/** What `pg_export_snapshot()` answers (hexadecimal fields and dashes); anything else is never sent. */
const snapshotIdPattern = /^[0-9A-F]+(-[0-9A-F]+)+$/i;

/**
 * Connections that each run one read-only statement in the snapshot of a transaction open on another
 * connection (`pg_export_snapshot`), so that two parts of one answer that each visit many rows (a
 * search's ranked page and its count: docs/benchmarks.md) run at once on two cores and still agree.
 *
 * A small pool of its own: a transaction waiting for one of these never waits on the pool it holds a
 * connection of, so concurrent requests cannot deadlock; and when none is free the caller runs the
 * statement itself (`free`).
 */
export class SnapshotReaders {
  private readonly pool: pg.Pool;

  constructor(
    databaseUrl: string,
    private readonly logger: Logger,
    private readonly size = 4,
  ) {
    // idle connections are kept as long as the ORM's (src/db/orm.ts): a new one costs ≈ 10 ms
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: size, idleTimeoutMillis: 300_000 });
    this.pool.on('error', (error) => this.logger.warn({ err: error }, 'snapshot reader connection failed'));
    this.pool.on('connect', answerInCallbackForm);
  }

  /** Whether a connection is idle or may be opened now (a statement asked for otherwise would wait). */
  get free(): boolean {
    return this.pool.waitingCount === 0 && (this.pool.idleCount > 0 || this.pool.totalCount < this.size);
  }

  /** Runs `statement` in the snapshot `snapshotId` names, under `timeoutMs` (statement_timeout). */
  async run<Row>(snapshotId: Promise<string>, timeoutMs: number, statement: { sql: string; params: unknown[] }): Promise<Row[]> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection lost while checked out (its backend ended) is an 'error' event on the client, which
    // the pool only listens for on idle ones: unheard, it would end the process.
    const lost = (error: Error) => {
      broken = error;
      this.logger.warn({ err: error }, 'snapshot reader connection lost');
    };
    client.on('error', lost);
    try {
      const id = await snapshotId;
      if (!snapshotIdPattern.test(id)) throw new Error(`not a snapshot id: ${id}`);
      // One round trip: the snapshot must be set before the transaction's first query. Serial: the
      // statement beside may take the parallel workers, and on 2 cores a parallel count beside a parallel
      // ranked page took 238 ms where a serial one took 207 (docs/benchmarks.md).
      await client.query(
        `begin transaction isolation level repeatable read, read only; set transaction snapshot '${id}'; ` +
          `set local statement_timeout = ${Math.floor(timeoutMs)}; set local max_parallel_workers_per_gather = 0`,
      );
      const result = await client.query(statement.sql, statement.params);
      await client.query('commit');
      return result.rows as Row[];
    } catch (error) {
      await client.query('rollback').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  close(): Promise<void> {
    return endPool(this.pool);
  }
}
