import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { SnapshotReaders } from './snapshot-readers.js';

/* Statements run beside a transaction see its snapshot, keep their timeout, and never hold a connection. */
let url: string;
let owner: pg.Client;
let writer: pg.Client;
beforeAll(async () => {
  url = await createTestDatabase();
  owner = new pg.Client({ connectionString: url });
  writer = new pg.Client({ connectionString: url });
  await Promise.all([owner.connect(), writer.connect()]);
  await writer.query('create table counted (n int)');
  await writer.query('insert into counted values (1), (2)');
});
afterAll(async () => {
  await Promise.all([owner?.end(), writer?.end()]);
});

/** Opens a repeatable-read transaction on `owner` and exports its snapshot. */
async function exported(): Promise<string> {
  await owner.query('begin transaction isolation level repeatable read, read only');
  return (await owner.query<{ id: string }>('select pg_export_snapshot() as id')).rows[0]!.id;
}

const count = { sql: 'select count(*)::int as n from counted where n > $1', params: [0] };

describe('snapshot readers', () => {
  it("see the exporting transaction's snapshot, not rows committed after it", async () => {
    const readers = new SnapshotReaders(url, createLogger('silent'), 2);
    try {
      const snapshot = await exported();
      await writer.query('insert into counted values (3)');
      expect(await readers.run<{ n: number }>(Promise.resolve(snapshot), 5_000, count)).toEqual([{ n: 2 }]);
      await owner.query('commit');
      // a fresh transaction sees the new row
      expect(await readers.run<{ n: number }>(exported(), 5_000, count)).toEqual([{ n: 3 }]);
      await owner.query('commit');
    } finally {
      await readers.close();
    }
  });

  it('are not free while every connection runs a statement, and free again after it', async () => {
    const readers = new SnapshotReaders(url, createLogger('silent'), 1);
    try {
      const snapshot = exported();
      expect(readers.free).toBe(true);
      const running = readers.run(snapshot, 5_000, { sql: 'select pg_sleep(0.3)', params: [] });
      expect(readers.free).toBe(false);
      await running;
      await owner.query('commit');
      expect(readers.free).toBe(true);
    } finally {
      await readers.close();
    }
  });

  it('stop a statement at the timeout, refuse what is not a snapshot id, and give the connection back after each failure', async () => {
    const readers = new SnapshotReaders(url, createLogger('silent'), 1);
    try {
      const snapshot = await exported();
      await expect(readers.run(Promise.resolve(snapshot), 100, { sql: 'select pg_sleep(5)', params: [] })).rejects.toMatchObject({ code: '57014' });
      expect(readers.free).toBe(true);
      await expect(readers.run(Promise.resolve("x'; drop table counted; --"), 5_000, count)).rejects.toThrow('not a snapshot id');
      await expect(readers.run(Promise.reject(new Error('export failed')), 5_000, count)).rejects.toThrow('export failed');
      await expect(readers.run(Promise.resolve(snapshot), 5_000, { sql: 'select * from no_such_table', params: [] })).rejects.toMatchObject({ code: '42P01' });
      expect(readers.free).toBe(true);
      // a reader whose backend is ended under it (a restart, an administrator): the statement fails,
      // the broken connection is dropped, and the next statement gets a new one
      const reading = readers.run<{ pid: number }>(Promise.resolve(snapshot), 20_000, { sql: 'select pg_backend_pid() as pid, pg_sleep(20)', params: [] });
      const failed = expect(reading).rejects.toMatchObject({ code: '57P01' });
      // ended once it runs (on a loaded machine it may take more than a fixed pause to reach Postgres: a
      // termination before it would end nothing, and the statement would then end by its timeout instead)
      const sleeping = `select pid from pg_stat_activity where state = 'active' and query like 'select pg_backend_pid() as pid, pg_sleep%' and pid <> pg_backend_pid()`;
      for (const until = Date.now() + 15_000; (await writer.query(sleeping)).rows.length === 0; await new Promise((resolve) => setTimeout(resolve, 20))) {
        expect(Date.now(), 'the statement runs').toBeLessThan(until);
      }
      await writer.query(`select pg_terminate_backend(pid) from (${sleeping}) running`);
      await failed;
      expect(await readers.run<{ n: number }>(Promise.resolve(snapshot), 5_000, count)).toEqual([{ n: 3 }]);
      // the one connection still works, in the same snapshot
      expect(await readers.run<{ n: number }>(Promise.resolve(snapshot), 5_000, count)).toEqual([{ n: 3 }]);
      await owner.query('commit');
      // a snapshot whose transaction has ended cannot be read
      await expect(readers.run(Promise.resolve(snapshot), 5_000, count)).rejects.toMatchObject({ code: '42704' });
    } finally {
      await readers.close();
    }
  });
});
