import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, sql, succeeded } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';
import { removeExpiredEvents } from './audit.js';

// The audit trail's counts kept by triggers (Migration20261128150000EventTallies) against a count of the
// events themselves, after every kind of change that moves them; and the counts the trail answers from
// them against its pages; and a user's pages against the visibility read from the entries themselves.
let service: TestService;
let bob: string;

beforeAll(async () => {
  service = await startTestService();
  bob = await service.createUserSession('bob');
});
afterAll(() => service?.stop());

/**
 * event_tally's sums per key equal the events grouped by the same key, with each chronicle's ACL read
 * from its entries now; and its rows of every ACL (-1) the events grouped without it.
 */
async function expectTalliesAgree(): Promise<void> {
  // grain 0 (by type and actor) here, with the pending rows (grain 4: under their ACL and, not rolled up
  // yet, every ACL's); the other grains are the same counts summed coarser
  const byTypeAndActor = `(select repository_id, acl_id, type, actor, n from event_tally where grain = 0
     union all select p.repository_id, x.acl_id, p.type, p.actor, p.n from event_tally p cross join lateral (values (p.acl_id), (-1)) x (acl_id) where p.grain = 4) t`;
  const sums = (acls: string) => `select repository_id, acl_id::text, type, actor, sum(n)::int as n from ${byTypeAndActor} where ${acls} group by 1, 2, 3, 4 having sum(n) <> 0 order by 1, 2, 3, 4`;
  const coarser = await sql(
    service,
    `select repository_id, acl_id, grain, type, actor from (
       select repository_id, acl_id, grain, type, actor, sum(n) as n from event_tally where grain between 1 and 3 group by 1, 2, 3, 4, 5
       union all
       select repository_id, acl_id, g.grain, g.type, g.actor, -sum(n) from event_tally t
         cross join lateral (values (1::smallint, t.type, ''), (2::smallint, '', t.actor), (3::smallint, '', '')) g (grain, type, actor)
        where t.grain = 0 group by 1, 2, 3, 4, 5) d
     group by 1, 2, 3, 4, 5 having sum(n) <> 0`,
  );
  expect(coarser).toEqual([]);
  const everyAcl = await sql(service, sums('acl_id = -1'));
  expect(everyAcl).toEqual(await sql(service, `select coalesce(repository_id, '') as repository_id, '-1' as acl_id, type, coalesce(actor, '') as actor, count(*)::int as n from event group by 1, 2, 3, 4 order by 1, 2, 3, 4`));
  const tallied = await sql(service, sums('acl_id <> -1'));
  const counted = await sql(
    service,
    `select coalesce(ev.repository_id, '') as repository_id,
            (case when ev.repository_id is null or ev.chronical_id is null then 0 else event_chronicle_acl(ev.repository_id, ev.chronical_id) end)::text as acl_id,
            ev.type, coalesce(ev.actor, '') as actor, count(*)::int as n
       from event ev group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
  );
  expect(tallied).toEqual(counted);
}

/** For the administrator and bob, each count answered from the tallies equals the number of events its whole page lists. */
async function expectCountsMatchPages(): Promise<void> {
  for (const session of [service.adminSession, bob]) {
    for (const query of [{}, { type: 'ENTRY_CREATED' }, { type: 'ACL_CHANGED' }, { actor: 'bob' }, { actor: 'admin', type: 'ENTRY_MOVED' }]) {
      const { status, body } = await call(contentUrl(service, '/audit', { ...query, limit: 1000 }, session));
      expect(status).toBe(200);
      expect({ query, asAdmin: session === service.adminSession, count: body.count }).toEqual({ query, asAdmin: session === service.adminSession, count: body.entries.length });
    }
    const { body } = await call(`${service.baseUrl}/api/v1/access.svc.admin/v1/audit?${new URLSearchParams({ limit: '1000', sessionId: session })}`);
    expect(body.count).toBe(body.entries.length);
  }
}

/** bob's whole trail is the events of the chronicles with an entry he may read now (an ACL granting him, or EVERYONE, read) or owns. */
async function expectVisibilityFromEntries(): Promise<void> {
  const { body } = await call(contentUrl(service, '/audit', { limit: 1000 }, bob));
  const expected = await sql<{ id: string }>(
    service,
    `select ev.id::text from event ev where ev.repository_id is not null and exists (
       select 1 from entry e where e.chronical_id = ev.chronical_id and e.repository_id = ev.repository_id
          and (e.owner = 'bob' or exists (select 1 from acl_grant g where g.acl_id = e.acl_id and g.principal in ('bob', 'EVERYONE'))))
     order by ev.id desc`,
  );
  expect(body.entries.map((event: { id: string }) => event.id)).toEqual(expected.map((row) => row.id));
}

const pendingRows = async () => (await sql<{ n: number }>(service, `select count(*)::int as n from event_tally where grain = 4`))[0]!.n;

const check = async () => {
  await expectTalliesAgree();
  await expectCountsMatchPages();
  await expectVisibilityFromEntries();
};
const putAcl = (kind: 'folder' | 'content', id: string, acl: Record<string, unknown>) => call(contentUrl(service, `/${kind}/${id}/acl`), json('PUT', acl));

describe('event tallies', () => {
  it('agree with the events and the pages after creations, ACL changes, moves, versions, purges, retention and folds', async () => {
    const open = await newFolder(service, 'tally-open');
    const closed = await newFolder(service, 'tally-closed');
    const mine = await newContent(service, { name: 'bobs.txt', parentId: open.id, session: bob });
    const theirs = await newContent(service, { name: 'admins.txt', parentId: open.id });
    await check();

    // a content's own ACL: closed to all but administrators; bob still sees his own content's events, as its owner
    expect((await putAcl('content', mine.id, { inherit: false, entries: [] })).status).toBe(200);
    await check();
    expect((await call(contentUrl(service, '/audit', { entryId: mine.id }, bob))).body.count).toBeGreaterThan(0);

    // a folder's ACL: its subtree's effective ACLs recomputed in one statement
    expect((await putAcl('folder', closed.id, { inherit: false, entries: [] })).status).toBe(200);
    expect((await putAcl('folder', open.id, { inherit: false, entries: [{ principal: 'bob', permission: 'read' }] })).status).toBe(200);
    await check();

    // a move into the closed folder and back
    await succeeded(service, 'PATCH', `/content/${theirs.id}`, { parentId: closed.id });
    await check();
    expect((await call(contentUrl(service, '/audit', { chronicalId: theirs.id }, bob))).body.count).toBe(0);
    await succeeded(service, 'PATCH', `/content/${theirs.id}`, { parentId: open.id });
    await check();

    // a folder of several contents moved: their chronicles' counts move in one statement (acl_recompute's)
    const many = await newFolder(service, 'tally-many', open.id);
    await Promise.all(Array.from({ length: 6 }, (_, i) => newContent(service, { name: `many-${i}.txt`, parentId: many.id })));
    await succeeded(service, 'PATCH', `/folder/${many.id}`, { parentId: closed.id });
    await check();
    await succeeded(service, 'PATCH', `/folder/${many.id}`, { parentId: open.id });
    await check();

    // versions: a working copy and a new version join the chronicle
    const workingCopy = await succeeded(service, 'POST', `/content/${theirs.id}/check-out`);
    await check();
    await succeeded(service, 'POST', `/content/${workingCopy.id}/check-in`);
    await check();

    // a purge: no entry is left, the chronicle's events are administrators' only
    expect((await call(contentUrl(service, `/content/${theirs.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    await check();

    // retention removes old events, of a chronicle that has entries and of one that has none
    for (const chronicle of [mine.id, theirs.id]) {
      await sql(service, `insert into event (repository_id, repository, type, entry_id, chronical_id, actor, at) select repository_id, repository, 'ENTRY_TAGGED', entry_id, chronical_id, 'bob', now() - interval '400 days' from event where chronical_id = ? limit 1`, [chronicle]);
    }
    await check();
    expect(await removeExpiredEvents(service.services.orm.em.fork(), 365)).toBe(2);
    await check();

    // a roll-up of the pending rows, and the folds, leave the sums as they were
    expect(await pendingRows()).toBeGreaterThan(0);
    await sql(service, `select event_tally_roll_up(repository_id) from (select distinct repository_id from event_tally) r`);
    expect(await pendingRows()).toBe(0);
    await check();
    await newContent(service, { name: 'after-roll-up.txt', parentId: open.id });
    expect(await pendingRows()).toBeGreaterThan(0);
    await check();
    await sql(service, `select event_tally_fold_all(repository_id) from (select distinct repository_id from event_tally) r`);
    expect(await pendingRows()).toBe(0);
    const [folded] = await sql<{ keys: number; rows: number }>(service, `select count(distinct (repository_id, acl_id, type, actor))::int as keys, count(*)::int as rows from event_tally`);
    expect(folded!.rows).toBe(folded!.keys);
    await check();
  });

  it('an inserted event writes one tally row, pending; a roll-up spreads a repository\'s pending rows into the grains under their ACL and every ACL', async () => {
    const folder = await newFolder(service, 'one-row');
    const em = service.services.orm.em.fork();
    const written = await em.transactional(async (tx) => {
      // the roll-up's draw (random() < 0.02) not taken: this seed's first draw is above it
      await tx.execute(`select setseed(0.5)`);
      const rows = async () => (await tx.execute<{ grain: number; n: string }[]>(`select grain, count(*) as n from event_tally where xmin = pg_current_xact_id()::xid group by grain order by grain`)).map((r) => ({ grain: r.grain, rows: Number(r.n) }));
      await tx.execute(`insert into event (repository_id, repository, type, entry_id, chronical_id, actor) select repository_id, 'default', 'ENTRY_TAGGED', id, chronical_id, 'carol' from entry where id = ?`, [folder.id]);
      const one = await rows();
      await tx.execute(`select event_tally_roll_up(repository_id) from entry where id = ?`, [folder.id]);
      const repository = `(select repository_id from entry where id = ?)`;
      const tally = await tx.execute<{ acl: string; grain: number; type: string; n: string }[]>(
        `select case when acl_id = -1 then 'every' else 'own' end as acl, grain, type, sum(n) as n from event_tally
          where repository_id = ${repository} and actor = 'carol' group by 1, 2, 3 order by 1, 2, 3`,
        [folder.id],
      );
      const pendingLeft = await tx.execute<{ n: string }[]>(`select count(*) as n from event_tally where grain = 4 and repository_id = ${repository}`, [folder.id]);
      return { one, pendingLeft: Number(pendingLeft[0]!.n), tally: tally.map((r) => [r.acl, r.grain, r.type, Number(r.n)]) };
    });
    expect(written.one).toEqual([{ grain: 4, rows: 1 }]);
    expect(written.pendingLeft).toBe(0);
    // carol's one event by type and actor (0) and by actor (2), under its folder's ACL and every ACL
    expect(written.tally).toEqual([
      ['every', 0, 'ENTRY_TAGGED', 1],
      ['every', 2, '', 1],
      ['own', 0, 'ENTRY_TAGGED', 1],
      ['own', 2, '', 1],
    ]);
    await check();
  });

  it('stay exact when roll-ups and folds run while events are written', async () => {
    const folder = await newFolder(service, 'tally-concurrent');
    const rollUp = `select event_tally_roll_up(repository_id) from (select distinct repository_id from event_tally) r`;
    const foldAll = `select event_tally_fold_all(repository_id) from (select distinct repository_id from event_tally) r`;
    // each on its own connection: pending rows taken by one roll-up are skipped by the others, not counted twice
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => newContent(service, { name: `concurrent-${i}.txt`, parentId: folder.id, session: i % 2 === 0 ? bob : service.adminSession })),
      ...Array.from({ length: 6 }, (_, i) => sql(service, i % 3 === 2 ? foldAll : rollUp)),
    ]);
    await check();
    await sql(service, rollUp);
    expect(await pendingRows()).toBe(0);
    await check();
  });

  it("an event's chronicle gets its row once: its ACL is looked up for a chronicle without one, not for one counted already", async () => {
    const folder = await newFolder(service, 'chronicle-known');
    const em = service.services.orm.em.fork();
    // in one transaction: this transaction's own calls of the lookup (pg_stat_get_xact_function_calls)
    const lookups = await em.transactional(async (tx) => {
      await tx.execute(`set local track_functions = 'all'`);
      const calls = async () => Number((await tx.execute<{ n: string | null }[]>(`select pg_stat_get_xact_function_calls('event_chronicle_acl'::regproc) as n`))[0]!.n ?? 0);
      const insert = (chronicle: string) =>
        tx.execute(`insert into event (repository_id, repository, type, entry_id, chronical_id, actor) select repository_id, 'default', 'ENTRY_TAGGED', id, ?, 'admin' from entry where id = ?`, [chronicle, folder.id]);
      await insert(folder.id);
      const known = await calls();
      await insert('a-chronicle-without-row');
      return { known, unknown: (await calls()) - known };
    });
    expect(lookups).toEqual({ known: 0, unknown: 1 });
    await expectTalliesAgree();
  });
});
