import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { addMember } from '../auth/index.js';
import type { Principal } from '../auth/principal.js';
import { AclCache } from './acl.js';

/*
 * AclCache.readableOf against a real database: a caller's cached readable ACLs are computed again exactly
 * when its repository holds other ACLs — whatever order their ids commit in, whoever makes them — or its
 * groups change; `all` follows. Its stamp (acl_tally, Migration20261207200000AclTally) is checked against
 * what it stands for, `max(id), count(*)` of the `acl` rows, through folds and concurrent creators.
 */

let bench: OperationsBench;
let repositoryId: string;
const clients: pg.Client[] = [];

const em = () => bench.services.orm.em.fork() as EntityManager;
const user = (userName: string, groups: string[] = []): Principal => ({ userName, roles: ['USER'], groups });

async function connect() {
  const client = new pg.Client({ connectionString: bench.services.config.DATABASE_URL });
  await client.connect();
  clients.push(client);
  return client;
}

/** A new stored ACL of the test repository with these levels, through `client` (its own transaction if one is open). */
async function newAcl(client: pg.Client, levels: Record<string, number>): Promise<number> {
  const { rows } = await client.query<{ id: string }>(`select acl_id_for($1, $2::jsonb) as id`, [repositoryId, JSON.stringify(levels)]);
  return Number(rows[0]!.id);
}

/** Every repository's tally against its `acl` rows, in one snapshot. */
async function expectTallyExact() {
  const rows = await em().execute<{ repository_id: string; acl: string; tally: string }[]>(`
    select r.id as repository_id,
      (select coalesce(max(id), 0) || ':' || count(*) from acl where repository_id = r.id) as acl,
      (select coalesce(max(newest), 0) || ':' || coalesce(sum(n), 0) from acl_tally where repository_id = r.id) as tally
    from repository r`);
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.tally, row.repository_id).toBe(row.acl);
}

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers(['ann', 'bob'], { readers: [] });
  repositoryId = (await bench.scopeOf('ann')).repository.id;
});
afterAll(async () => {
  for (const client of clients) await client.end();
  await bench?.stop();
});

describe('AclCache.readableOf', () => {
  it('all: while every ACL grants the caller read; an ACL that does not ends it, in another cache too', async () => {
    const cache = new AclCache();
    const other = new AclCache();
    await newAcl(await connect(), { EVERYONE: 3 });
    const before = await cache.readableOf(em(), user('ann'), repositoryId);
    expect(before.all).toBe(true);
    expect(await other.readableOf(em(), user('ann'), repositoryId)).toEqual(before);

    const bobs = await newAcl(await connect(), { bob: 1 });
    for (const each of [cache, other]) {
      const after = await each.readableOf(em(), user('ann'), repositoryId);
      expect(after).toEqual({ ids: before.ids, all: false });
      expect((await each.readableOf(em(), user('bob'), repositoryId)).ids).toContain(bobs);
    }
    await expectTallyExact();
  });

  it('an ACL committed after one with a higher id (ids are handed out before commit) is seen', async () => {
    const cache = new AclCache();
    const [first, second] = [await connect(), await connect()];
    await first.query('begin');
    await second.query('begin');
    const lower = await newAcl(first, { ann: 1, first: 1 });
    const higher = await newAcl(second, { ann: 1, second: 1 });
    expect(lower).toBeLessThan(higher);
    await second.query('commit');
    const seen = await cache.readableOf(em(), user('ann'), repositoryId);
    expect(seen.ids).toContain(higher);
    expect(seen.ids).not.toContain(lower);

    await first.query('commit');
    const now = await cache.readableOf(em(), user('ann'), repositoryId);
    expect(now.ids).toEqual(expect.arrayContaining([lower, higher]));
    await expectTallyExact();
  });

  it('an ACL rolled back changes nothing; one of the caller\'s group is seen once the caller is its member', async () => {
    const cache = new AclCache();
    const client = await connect();
    const before = await cache.readableOf(em(), user('bob'), repositoryId);
    await client.query('begin');
    await newAcl(client, { bob: 1, gone: 1 });
    await client.query('rollback');
    expect(await cache.readableOf(em(), user('bob'), repositoryId)).toBe(before);

    const groups = await newAcl(client, { 'group:readers': 1 });
    expect((await cache.readableOf(em(), (await bench.scopeOf('bob')).principal, repositoryId)).ids).not.toContain(groups);
    await addMember(em(), bench.services, administrator, { name: 'readers', userName: 'bob' });
    const scope = await bench.scopeOf('bob');
    expect(scope.principal.groups).toEqual(['readers']);
    expect((await cache.readableOf(scope.em, scope.principal, repositoryId)).ids).toContain(groups);
    await expectTallyExact();
  });
});

describe('acl_tally', () => {
  it('counts ACLs added many to a statement, and stays exact through folds, concurrent ones included', async () => {
    const client = await connect();
    await client.query(
      `insert into acl (repository_id, digest, entries) select $1, 'bulk-' || i, jsonb_build_object('bulk' || i, 1) from generate_series(1, 5) i`,
      [repositoryId],
    );
    await expectTallyExact();
    // enough statements that folds are drawn (one in ten)
    for (let i = 0; i < 60; i++) await newAcl(client, { [`many-${i}`]: 1 });
    await expectTallyExact();

    // a fold holding its rows till commit: another fold skips them instead of waiting
    const [holder, folder] = [client, await connect()];
    await holder.query('begin');
    await holder.query(`select acl_tally_fold($1)`, [repositoryId]);
    await newAcl(folder, { during: 1 });
    await folder.query(`set lock_timeout = '2s'`);
    await folder.query(`select acl_tally_fold($1)`, [repositoryId]);
    await holder.query('commit');
    await expectTallyExact();
    await client.query(`select acl_tally_fold($1)`, [repositoryId]);
    const { rows } = await client.query<{ rows: string }>(`select count(*) as rows from acl_tally where repository_id = $1`, [repositoryId]);
    expect(Number(rows[0]!.rows)).toBe(1);
    await expectTallyExact();
  });

  // last: it empties the repository's entries too
  it('is emptied with the ACLs by a truncate, and a caller\'s cache computes again from nothing', async () => {
    const cache = new AclCache();
    const before = await cache.readableOf(em(), user('ann'), repositoryId);
    expect(before.ids.length).toBeGreaterThan(0);
    const client = await connect();
    await client.query('truncate acl cascade');
    const { rows } = await client.query<{ n: string }>(`select count(*) as n from acl_tally`);
    expect(Number(rows[0]!.n)).toBe(0);
    await expectTallyExact();
    expect(await cache.readableOf(em(), user('ann'), repositoryId)).toEqual({ ids: [], all: true });
  });
});
