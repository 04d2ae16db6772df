import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { listenForNotifications } from './notifications.js';

let databaseUrl: string;
let notifier: pg.Client;
beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  notifier = new pg.Client({ connectionString: databaseUrl });
  await notifier.connect();
});
afterAll(() => notifier?.end());

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

it('hands notifications to their channel, and after a lost connection reconnects and reports that some were missed', async () => {
  const heard: string[] = [];
  let missed = 0;
  const stop = await listenForNotifications(
    databaseUrl,
    [{ channel: 'test_channel', notified: (payload) => heard.push(payload), missedSome: () => missed++ }],
    createLogger('silent'),
  );
  try {
    await notifier.query(`select pg_notify('test_channel', 'first'), pg_notify('other_channel', 'ignored')`);
    await until(() => heard.length === 1, 'the first notification');
    expect(heard).toEqual(['first']);
    expect(missed).toBe(0);

    // the listener's backend is killed (a restart of Postgres, a network cut look the same to it)
    const { rows } = await notifier.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`);
    expect(rows).toHaveLength(1);
    await notifier.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    await until(() => missed === 1, 'the reconnection');

    await notifier.query(`select pg_notify('test_channel', 'second')`);
    await until(() => heard.length === 2, 'a notification after the reconnection');
    expect(heard).toEqual(['first', 'second']);
    // one listener again, not one per reported error
    const after = await notifier.query(`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`);
    expect(after.rows).toHaveLength(1);
  } finally {
    await stop();
  }
});
