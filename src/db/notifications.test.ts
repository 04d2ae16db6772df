import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { listenForNotifications } from './notifications.js';

/*
 * The failure path of the notification listener: its connection is killed (a restarted database, a
 * dropped network), it reconnects, tells its listeners that notifications may have been missed, and
 * hears the channel again.
 */

let databaseUrl: string;
let admin: pg.Client;
beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
});
afterAll(() => admin?.end());

const until = async (condition: () => boolean, timeoutMs = 10_000) => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('listenForNotifications', () => {
  it('after a lost connection reconnects, reports the gap (missedSome) and hears the channel again', async () => {
    const heard: string[] = [];
    let gaps = 0;
    const stop = await listenForNotifications(
      databaseUrl,
      [{ channel: 'test_channel', notified: (payload) => heard.push(payload), missedSome: () => gaps++ }],
      createLogger('silent'),
    );
    try {
      await admin.query(`select pg_notify('test_channel', 'before')`);
      await until(() => heard.includes('before'));
      expect(gaps).toBe(0);

      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen%' and datname = current_database()`);
      await until(() => gaps === 1);
      await admin.query(`select pg_notify('test_channel', 'after')`);
      await until(() => heard.includes('after'));
      expect(heard).toEqual(['before', 'after']);
    } finally {
      await stop();
    }
  });
});
