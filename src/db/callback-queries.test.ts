import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { answerInCallbackForm } from './callback-queries.js';
import { endPool } from './end-pool.js';
import { createOrm, type Orm } from './orm.js';

let url: string;
let plain: pg.Pool;
let wrapped: pg.Pool;
beforeAll(async () => {
  url = await createTestDatabase();
  plain = new pg.Pool({ connectionString: url, max: 1 });
  wrapped = new pg.Pool({ connectionString: url, max: 1 });
  wrapped.on('connect', answerInCallbackForm);
});
afterAll(async () => {
  await endPool(plain);
  await endPool(wrapped);
});

const statement = `select n, 'row ' || n as text, array[n, n + 1] as list, now() - make_interval(secs => n) < now() as past from generate_series(1, $1::int) n`;

describe('answerInCallbackForm', () => {
  it("answers the promise form with the result pg's own promise form gives", async () => {
    const [ours, theirs] = [await wrapped.connect(), await plain.connect()];
    try {
      const [a, b] = [await ours.query(statement, [3]), await theirs.query(statement, [3])];
      expect(a.rows).toEqual(b.rows);
      expect(a.rows[2]).toEqual({ n: 3, text: 'row 3', list: [3, 4], past: true });
      expect(a.fields.map((field) => field.name)).toEqual(b.fields.map((field) => field.name));
      expect([a.command, a.rowCount]).toEqual([b.command, b.rowCount]);
      // a config object, and several statements in one text, as pg answers them
      expect((await ours.query({ text: statement, values: [1], rowMode: 'array' })).rows).toEqual([[1, 'row 1', [1, 2], true]]);
      const several = (await ours.query('select 1 as one; select 2 as two')) as unknown as pg.QueryResult[];
      expect(several.map((result) => result.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);
    } finally {
      ours.release();
      theirs.release();
    }
  });

  it("rejects with pg's error, its stack leading back to the caller; the callback forms go as they are", async () => {
    const client = await wrapped.connect();
    try {
      const error = (await client.query('select * from no_such_table').catch((failure: unknown) => failure)) as pg.DatabaseError;
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe('42P01');
      expect(error.stack).not.toContain('onStreamRead');
      const answered = await new Promise<pg.QueryResult>((resolve, reject) => client.query('select $1::text as v', ['x'], (failure, result) => (failure ? reject(failure) : resolve(result))));
      expect(answered.rows).toEqual([{ v: 'x' }]);
      // and the connection is still usable after the error
      expect((await client.query('select 2 as n')).rows).toEqual([{ n: 2 }]);
    } finally {
      client.release();
    }
  });

  it("is what the ORM's connections and the statements through Kysely run on", async () => {
    const orm: Orm = await createOrm(url, createLogger('silent'), { poolMax: 1 });
    try {
      const em = orm.em.fork() as EntityManager;
      const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
      const rows = (await em.getConnection().getClient().executeQuery(CompiledQuery.raw('select $1::int as n', [5]))).rows;
      expect(rows).toEqual([{ n: 5 }]);
      const client = await pool.connect();
      try {
        expect(client.query).not.toBe(pg.Client.prototype.query);
        expect(client.query.name).toBe('callbackForm');
      } finally {
        client.release();
      }
    } finally {
      await orm.close(true);
    }
  });
});
