/**
 * The audit trail at scale (issue 24 item 2): AUDIT_EVENTS events (default 1,000,000, seeded by SQL)
 * over a repository of AUDIT_CONTENTS contents (100,000: ten events each, by 50 actors, of 13 entry
 * types, one a second over the last days; one in a hundred a login of the administration domain).
 * Then, through REST as a client calls it, AUDIT_SAMPLES pages (limit 100, newest first, with their
 * `count`) of each filter — by entry, by chronicle, by actor, by type, by a one-hour range — as the
 * administrator (GET C/audit and GET A/audit) and as a user who reads one content in ten (the
 * visibility filter). Prints p50 / p95 of each and a last line
 * `audit: <worst p95> ms … (targets: MET)` — target: every filter's p95 under 50 ms.
 *
 *   npm run bench -- audit        knobs: AUDIT_EVENTS (1000000), AUDIT_CONTENTS (100000), AUDIT_SAMPLES (40)
 */
import 'reflect-metadata';
import { CompiledQuery } from 'kysely';
import { contentBase, fmt, header, runBench, targetsLine, verdict } from './lib.js';
import { REPOSITORY_ID, seededReadable, startSeededService } from './seed.js';

const EVENTS = Number(process.env.AUDIT_EVENTS ?? 1_000_000);
const CONTENTS = Number(process.env.AUDIT_CONTENTS ?? 100_000);
const SAMPLES = Number(process.env.AUDIT_SAMPLES ?? 40);
const ACTORS = 50;
const ENTRY_TYPES = ['ENTRY_CREATED', 'ENTRY_UPDATED', 'ENTRY_MOVED', 'ENTRY_DELETED', 'ENTRY_RESTORED', 'CONTENT_CHECKED_OUT', 'CONTENT_CHECKED_IN', 'CONTENT_CHECK_OUT_CANCELLED', 'ENTRY_LOCKED', 'ENTRY_UNLOCKED', 'ENTRY_TAGGED', 'ACL_CHANGED', 'JOB_STATE_CHANGED'];
const TARGET_MS = 50;

/** Event i: content 1 + i % CONTENTS, actor user<i % 50>, type i % 13, at i seconds after the first; every hundredth a login. */
async function seedEvents(run: (sql: string) => Promise<unknown>): Promise<void> {
  const types = `(array[${ENTRY_TYPES.map((type) => `'${type}'`).join(', ')}])`;
  const chunk = 250_000;
  for (let lo = 1; lo <= EVENTS; lo += chunk) {
    const hi = Math.min(EVENTS, lo + chunk - 1);
    await run(`
      insert into event (at, repository_id, repository, type, entry_id, chronical_id, actor, details)
      select now() - ((${EVENTS + 1} - i) || ' seconds')::interval,
             case when i % 100 = 0 then null else '${REPOSITORY_ID}' end,
             case when i % 100 = 0 then null else 'default' end,
             case when i % 100 = 0 then 'LOGIN_SUCCEEDED' else ${types}[1 + i % ${ENTRY_TYPES.length}] end,
             case when i % 100 = 0 then null else 'bc-' || (1 + i % ${CONTENTS}) end,
             case when i % 100 = 0 then null else 'bc-' || (1 + i % ${CONTENTS}) end,
             'user' || (i % ${ACTORS}),
             jsonb_build_object('n', i)
      from generate_series(${lo}, ${hi}) i`);
    process.stdout.write(`\rseeded ${hi.toLocaleString('en')} events`);
  }
  process.stdout.write('\n');
  // the tallies folded into a row per key, as the folds the inserts run now and then leave them
  // (a bulk load leaves a row per statement and key: Migration20261128150000EventTallies)
  await run(`select event_tally_fold_all(repository_id) from (select distinct repository_id from event_tally) r`);
  await run('vacuum analyze event');
  await run('vacuum analyze event_tally');
  await run('vacuum analyze event_chronicle');
  await run('checkpoint');
}

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`audit: pages of ${EVENTS.toLocaleString('en')} events over ${CONTENTS.toLocaleString('en')} contents, through REST`);
  const { service, orm, session, userSession } = await startSeededService('audit', CONTENTS, cleanup);
  const client = orm.em.getConnection().getClient();
  const t0 = performance.now();
  await seedEvents((sql) => client.executeQuery(CompiledQuery.raw(sql)));
  console.log(`seeding the events took ${fmt((performance.now() - t0) / 1000)} s`);
  const [bounds] = (await client.executeQuery<{ first: string; last: string }>(CompiledQuery.raw('select min(at) as first, max(at) as last from event'))).rows;
  const [first, last] = [new Date(bounds!.first), new Date(bounds!.last)];

  const restDate = (date: Date) => `${date.toISOString().slice(0, 23)}+0000`;
  const admin = `${service.baseUrl}/api/v1/access.svc.admin/v1`;
  const page = async (url: string, query: Record<string, string>, caller: string) => {
    const started = performance.now();
    const response = await fetch(`${url}/audit?${new URLSearchParams({ ...query, sessionId: caller })}`);
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`GET audit ${JSON.stringify(query)}: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { count: number; entries: unknown[] };
    return { ms, count: body.count };
  };
  /** content n (1-based) and one the bench user may read */
  const content = (n: number) => `bc-${1 + (n % CONTENTS)}`;
  const readableContent = (n: number) => {
    for (let i = n; ; i++) if (seededReadable(1 + (i % CONTENTS))) return content(i);
  };
  const hourAt = (n: number) => {
    const start = new Date(first.getTime() + ((n * 7_919_000) % Math.max(1, last.getTime() - first.getTime() - 3_600_000)));
    return { from: restDate(start), to: restDate(new Date(start.getTime() + 3_600_000)) };
  };
  const c = contentBase(service.baseUrl);
  const filters: { name: string; url: string; caller: string; query: (n: number) => Record<string, string> }[] = [
    { name: 'admin, by entry', url: c, caller: session, query: (n) => ({ entryId: content(n * 37) }) },
    { name: 'admin, by chronicle', url: c, caller: session, query: (n) => ({ chronicalId: content(n * 41) }) },
    { name: 'admin, by actor', url: c, caller: session, query: (n) => ({ actor: `user${n % ACTORS}` }) },
    { name: 'admin, by type', url: c, caller: session, query: (n) => ({ type: ENTRY_TYPES[n % ENTRY_TYPES.length]! }) },
    { name: 'admin, by one hour', url: c, caller: session, query: hourAt },
    { name: 'admin, none (newest)', url: c, caller: session, query: () => ({}) },
    { name: 'admin A/audit, logins', url: admin, caller: session, query: (n) => ({ type: 'LOGIN_SUCCEEDED', offset: String(n * 10) }) },
    { name: 'user, by entry', url: c, caller: userSession, query: (n) => ({ entryId: readableContent(n * 37) }) },
    { name: 'user, by actor', url: c, caller: userSession, query: (n) => ({ actor: `user${n % ACTORS}` }) },
    { name: 'user, by type', url: c, caller: userSession, query: (n) => ({ type: ENTRY_TYPES[n % ENTRY_TYPES.length]! }) },
    { name: 'user, by one hour', url: c, caller: userSession, query: hourAt },
    { name: 'user, none (newest)', url: c, caller: userSession, query: () => ({}) },
  ];
  const results: { name: string; p95: number }[] = [];
  for (const filter of filters) {
    // two warm-up pages, then the samples
    for (let n = 0; n < 2; n++) await page(filter.url, filter.query(n + 1000), filter.caller);
    const times: number[] = [];
    let counted = 0;
    for (let n = 0; n < SAMPLES; n++) {
      const { ms, count } = await page(filter.url, filter.query(n), filter.caller);
      times.push(ms);
      counted += count;
    }
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length / 2)]!;
    const p95 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!;
    results.push({ name: filter.name, p95 });
    console.log(`${filter.name.padEnd(24)} count ~${Math.round(counted / SAMPLES).toLocaleString('en').padStart(8)}  p50 ${fmt(p50).padStart(6)} ms  p95 ${fmt(p95).padStart(6)} ms  (target < ${TARGET_MS} ms: ${verdict(p95 < TARGET_MS)})`);
  }
  const worst = results.reduce((a, b) => (b.p95 > a.p95 ? b : a));
  const missed = results.filter((result) => result.p95 >= TARGET_MS).map((result) => result.name);
  console.log(targetsLine('audit', `worst p95 ${fmt(worst.p95)} ms (${worst.name}) over ${results.length} filters of ${EVENTS.toLocaleString('en')} events`, missed));
}

await runBench(main);
