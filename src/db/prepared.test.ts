import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { createOrm, type Orm } from './orm.js';
import { executePrepared, executePreparedText } from './prepared.js';

let orm: Orm;
const fork = () => orm.em.fork() as EntityManager;

beforeAll(async () => {
  // one connection: what the statements prepared on it are can be read back on it
  orm = await createOrm(await createTestDatabase(), createLogger('silent'), { poolMax: 1 });
  await fork().execute('create table prepared_probe (id text primary key, at timestamptz, fields jsonb)');
});
afterAll(() => orm?.close(true));

describe('executePrepared', () => {
  const select = 'select id, at, fields, ?::int as n from prepared_probe where id = ?';

  it('prepares the statement once on the connection and answers the rows em.execute answers', async () => {
    const at = new Date('2026-11-23T01:02:03.456Z');
    await executePrepared(fork(), 'probe-insert', 'insert into prepared_probe values (?, ?::timestamptz, ?::jsonb)', ['a', at.toISOString(), JSON.stringify({ x: [1] })]);
    const prepared = await executePrepared<Record<string, unknown>>(fork(), 'probe-select', select, [7, 'a']);
    expect(await executePrepared(fork(), 'probe-select', select, [7, 'a'])).toEqual(prepared);
    expect(prepared).toEqual(await fork().execute(select, [7, 'a']));
    expect(prepared[0]).toMatchObject({ id: 'a', fields: { x: [1] }, n: 7 });
    expect(new Date(prepared[0]!.at as string).getTime()).toBe(at.getTime());
    const statements = await fork().execute<{ name: string }[]>('select name from pg_prepared_statements order by name');
    expect(statements.map((row) => row.name)).toEqual(['probe-insert', 'probe-select']);
  });

  it('inside a transaction runs on its connection: sees its writes, and a rollback takes them back', async () => {
    const seen = await fork()
      .transactional(async (em) => {
        await executePrepared(em, 'probe-insert', 'insert into prepared_probe values (?, ?::timestamptz, ?::jsonb)', ['b', null, '{}']);
        const rows = await executePrepared<{ id: string }>(em, 'probe-select', select, [1, 'b']);
        throw Object.assign(new Error('roll back'), { rows });
      })
      .catch((error: { rows: { id: string }[] }) => error.rows);
    expect(seen.map((row) => row.id)).toEqual(['b']);
    expect(await executePrepared(fork(), 'probe-select', select, [1, 'b'])).toEqual([]);
  });

  it('executePreparedText names a statement after its text: one prepared statement per distinct text, the rows em.execute answers', async () => {
    const byId = 'select id, fields from prepared_probe where id = ?';
    const byIds = 'select id, fields from prepared_probe where id = ? or id = ?';
    const before = new Set((await fork().execute<{ name: string }[]>('select name from pg_prepared_statements')).map((row) => row.name));
    expect(await executePreparedText(fork(), byId, ['a'])).toEqual(await fork().execute(byId, ['a']));
    expect(await executePreparedText(fork(), byId, ['b'])).toEqual(await fork().execute(byId, ['b']));
    expect(await executePreparedText(fork(), byIds, ['a', 'b'])).toEqual(await fork().execute(byIds, ['a', 'b']));
    const added = (await fork().execute<{ name: string; statement: string }[]>('select name, statement from pg_prepared_statements')).filter((row) => !before.has(row.name));
    expect(added.map((row) => row.statement).sort()).toEqual([byId.replace('?', '$1'), byIds.replace('?', '$1').replace('?', '$2')].sort());
  });
});
