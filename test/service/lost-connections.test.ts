import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, uploadContent } from '../helpers/entries.js';
import { call, startTestService, type TestService } from '../helpers/service.js';

/*
 * Postgres ends the service's connections (a restart, a failover, an administrator) while requests
 * are under way: those requests are 503s that say so, with Retry-After, never 500s; the process lives
 * on (a lost connection nobody listened for, or a promise nobody awaited, used to end it) and answers
 * again once the database is back.
 */

let service: TestService;
let admin: pg.Client;
beforeAll(async () => {
  service = await startTestService();
  admin = new pg.Client({ connectionString: service.config.DATABASE_URL });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await service?.stop();
});

/** Ends every busy backend of the service's database every few milliseconds until `until`. */
async function terminateBackends(until: number): Promise<number> {
  let ended = 0;
  while (Date.now() < until) {
    const { rows } = await admin.query<{ n: string }>(
      `select count(*) filter (where pg_terminate_backend(pid)) as n from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid() and state <> 'idle'`,
    );
    ended += Number(rows[0]!.n);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return ended;
}

describe('connections to the database lost under load', () => {
  it('answers 503 unavailable with Retry-After for the requests they held, and serves again afterwards', async () => {
    for (let i = 0; i < 5; i++) expect((await uploadContent(service, { name: `lost-${i}.txt`, bytes: `connection lost words ${i}` })).status).toBe(201);
    const requests = [
      () => uploadContent(service, { name: `under-load-${Math.random()}.txt`, bytes: 'connection lost words' }),
      () => call(contentUrl(service, '/content/search/by-text', { searchText: 'words' })),
      () => call(contentUrl(service, '/content/search', { limit: '50' })),
      () => call(contentUrl(service, '/content/search/by-condition', { condition: "name like 'lost*'" })),
    ];
    const statuses = new Map<number, number>();
    const refusals: { body: any; retryAfter: string | null }[] = [];
    const until = Date.now() + 3000;
    const terminated = terminateBackends(until);
    while (Date.now() < until) {
      const answers = await Promise.all(requests.map((request) => request()));
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 503) refusals.push({ body: answer.body, retryAfter: answer.headers.get('retry-after') });
      }
    }
    expect(await terminated).toBeGreaterThan(0);
    expect([...statuses.keys()].every((status) => [200, 201, 503].includes(status)), JSON.stringify([...statuses])).toBe(true);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal.body).toMatchObject({ status: 503, reasonCode: 'unavailable' });
      expect(refusal.retryAfter).toBe('1');
    }
    // back to normal: every kind of request succeeds again
    for (const request of requests) expect((await request()).status).toBeLessThan(300);
  }, 60_000);
});
