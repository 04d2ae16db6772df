/**
 * Bulk SQL seeding of a repository at scale, shared by the search and statistics benchmarks: `rows`
 * contents in about rows / 1000 folders, each with a resource (sizes spread up to 10 MB), tags, custom
 * properties, a name with a word of known frequency (`seededWord`), and extracted text holding the
 * word of the next content (content i's text has `seededWord(i + 1)`), so that queries know their
 * counts and a full-text match comes from names and from texts.
 */
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { createOrm, type Orm } from '../src/db/orm.js';
import { entities } from '../src/modules/entities.js';
import { createLogger } from '../src/logger.js';
import { fmt, login, makeTempDir, removeDir, startServiceChild } from './lib.js';

export const REPOSITORY_ID = 'svc.repository.default';
const CHUNK = 100_000;

export const seededFolders = (rows: number) => Math.max(1, Math.round(rows / 1000));

/**
 * Access control at scale (DESIGN §10, issue 23 item 5): ACL k of `SEEDED_ACLS` grants `read` to the
 * group `g<k % SEEDED_GROUPS>` and `all` to a principal of its own (so that every one is distinct);
 * content i and folder f point at ACL i % SEEDED_ACLS and f % SEEDED_ACLS. The bench user is a member of
 * the groups g0 … g<BENCH_USER_GROUPS - 1>: it may read the entries whose ACL's group is one of them,
 * `seededReadable(i)` — one in ten — and owns none (the seeded owners are user0 … user19).
 */
export const SEEDED_ACLS = 10_000;
export const SEEDED_GROUPS = 200;
export const BENCH_USER = 'benchuser';
export const BENCH_USER_GROUPS = 20;
const seededAclId = (k: string) => `(${ACL_ID_BASE} + (${k}) % ${SEEDED_ACLS})`;
const ACL_ID_BASE = 1_000_000;
export const seededReadable = (i: number) => (i % SEEDED_ACLS) % SEEDED_GROUPS < BENCH_USER_GROUPS;

const rareEveryOf = (rows: number) => Math.max(1, Math.floor(rows / 10));
/** The word in the name of content i. */
export const seededWord = (rows: number) => {
  const rareEvery = rareEveryOf(rows);
  return (i: number) => (i % rareEvery === 7 ? 'rareword' : i % 100 === 3 ? 'mediumword' : i % 10 < 3 ? 'commonword' : 'plainword');
};

/**
 * Seeds contents `from` … `rows` (the ACLs and folders too when `from` is 1). `shapeRows` is the size
 * the shapes are drawn for (the folders, the rare word's spacing): a repository grown in steps up to
 * `shapeRows` (the search benchmark's 100,000, then 1,000,000) holds at each step what its queries expect.
 */
export async function seedContents(orm: Orm, rows: number, { from = 1, shapeRows = rows } = {}): Promise<void> {
  const folders = seededFolders(shapeRows);
  const wordOf = (i: string) =>
    `case when ${i} % ${rareEveryOf(shapeRows)} = 7 then 'rareword' when ${i} % 100 = 3 then 'mediumword' when ${i} % 10 < 3 then 'commonword' else 'plainword' end`;
  const wordSql = wordOf('i');
  // content i was created i seconds after content 1 and is stored after it, as a repository that
  // receives its contents one after another stores them (the seed wrote them newest first before,
  // which no repository does: every tie of relevance then displaced by-text's top-N, 30 ms of 256)
  // — and the newest of them more than the thumbnail sweep's window ago (an hour: src/modules/conversion/thumbnails.ts): seeded
  // with the newest at now(), the last hour's 1,800 PDFs and images (bytes that do not exist, no thumbnail)
  // looked like lost thumbnail requests, and the service ran up to 1,000 thumbnail jobs a minute beside the
  // searches at 1,000,000 contents (docs/benchmarks.md, "The p95 spikes")
  const createdAt = (i: string) => `now() - interval '2 hours' - ((${shapeRows + 1} - ${i}) || ' seconds')::interval`;
  const client = orm.em.getConnection().getClient();
  const run = (sql: string) => client.executeQuery(CompiledQuery.raw(sql));
  // Each word's count is built once at the end, as its migration builds it: through its row trigger,
  // a load of 100,000 contents in one statement leaves a row per change for each word, which uploads,
  // one a transaction, fold as they go (Migration20261123170000EntryVisibleWordCounts).
  // So are the postings (Migration20261129130000EntryVisiblePostings): those of this load's contents are added at the end, in one statement.
  const bulkBuiltTriggers = ['entry_visible_word_count_insert_delete', 'entry_visible_word_count_update', 'entry_visible_posting_insert_delete', 'entry_visible_posting_update'];
  for (const trigger of bulkBuiltTriggers) await run(`alter table entry_visible_words disable trigger ${trigger}`);
  if (from === 1) await seedAclsAndFolders(run, folders);
  for (let lo = from; lo <= rows; lo += CHUNK) {
    const hi = Math.min(rows, lo + CHUNK - 1);
    await run(`
      insert into resource (id, repository_id, name, mime_type, file_size, md5, storage_path, state, created_at, creator)
      select 'br-' || i, '${REPOSITORY_ID}', 'doc-' || i || '.txt',
             (array['text/plain', 'application/pdf', 'image/png', 'text/markdown'])[1 + i % 4],
             (i::bigint * 7919) % 10000000, md5(i::text), 'bench/' || i, 'ready', ${createdAt('i')}, 'admin'
      from generate_series(${lo}, ${hi}) i`);
    await run(`
      insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, created_at, last_modified_at,
                         version, version_major, version_minor, version_status, is_latest, parent_id, resource_id, properties, tags, acl_id)
      select 'bc-' || i, '${REPOSITORY_ID}', 'CONTENT', 'bc-' || i, 'doc-' || i || '-' || ${wordSql} || '.txt',
             'user' || (i % 20), 'admin', 'admin', ${createdAt('i')}, ${createdAt('i')},
             '1.0', 1, 0, 'CURRENT', true, 'bf-' || (i % ${folders}), 'br-' || i,
             jsonb_build_object('n', i % 100, 'kind', 'k' || (i % 7)),
             array['t' || (i % 50), ${wordSql}], ${seededAclId('i')}
      from generate_series(${lo}, ${hi}) i`);
    await run(`
      insert into resource_text (resource_id, repository_id, text)
      select 'br-' || i, '${REPOSITORY_ID}', 'extracted text of document ' || i || ' mentions ' || ${wordOf('(i + 1)')} || ' among other words'
      from generate_series(${lo}, ${hi}) i`);
    process.stdout.write(`\rseeded ${hi.toLocaleString('en')} contents`);
  }
  process.stdout.write('\n');
  for (const trigger of bulkBuiltTriggers) await run(`alter table entry_visible_words enable trigger ${trigger}`);
  await run('select entry_visible_word_count_rebuild()');
  if (from === 1) await run('select entry_visible_posting_rebuild()');
  else {
    await run(`
      insert into entry_visible_posting (repository_id, word, created_at, entry_id)
      select w.repository_id, word, w.created_at, w.entry_id
        from generate_series(${from}, ${rows}) i join entry_visible_words w on w.entry_id = 'bc-' || i cross join unnest(tsvector_to_array(w.words)) as word
       order by 1, 2, 3, 4`);
  }
  // the visible totals folded into a row per entry type and ACL, as the fold the triggers run now and then leaves them
  // (unfolded, a bulk load leaves a row per statement and ACL: an administrator's count summed 100,000 rows)
  await run(`select entry_visible_count_fold('${REPOSITORY_ID}')`);
  // so are the tag sets per ACL (a row per chunk statement, ACL and tag set unfolded)
  await run(`select entry_visible_tag_set_fold('${REPOSITORY_ID}')`);
  // what autovacuum does to a table after bulk inserts: statistics, and the visibility map that lets
  // counts be answered by index-only scans
  await run('vacuum analyze entry');
  await run('vacuum analyze acl');
  await run('vacuum analyze acl_grant');
  await run('vacuum analyze resource');
  await run('vacuum analyze resource_text');
  await run('vacuum analyze entry_visible_words');
  await run('vacuum analyze entry_visible_tag');
  await run('vacuum analyze entry_visible_tag_set');
  await run('vacuum analyze entry_visible_word_count');
  await run('vacuum analyze entry_visible_posting');
  // and the checkpoint Postgres makes within minutes: the seeding's dirty pages are written now, not
  // during the first searches (with shared_buffers at 1 GB they stalled the first queries' p95)
  await run('checkpoint');
}

/** The 10,000 ACLs with their grants, and the folders, of an empty repository. */
async function seedAclsAndFolders(run: (sql: string) => Promise<unknown>, folders: number): Promise<void> {
  await run(`
    insert into acl (id, repository_id, digest, entries)
    select ${seededAclId('k')}, '${REPOSITORY_ID}', md5(a.entries::text), a.entries
    from generate_series(0, ${SEEDED_ACLS - 1}) k, lateral (select jsonb_build_object('group:g' || (k % ${SEEDED_GROUPS}), 1, 'keeper' || k, 3) as entries) a`);
  await run(`
    insert into acl_grant (repository_id, principal, acl_id, permission)
    select '${REPOSITORY_ID}', g.key, a.id, g.value::smallint from acl a, jsonb_each_text(a.entries) g where a.id >= ${ACL_ID_BASE}`);
  await run(`
    insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, created_at, last_modified_at, is_latest, acl_id)
    select 'bf-' || f, '${REPOSITORY_ID}', 'FOLDER', 'bf-' || f, 'folder-' || f, 'admin', 'admin', 'admin',
           now() - interval '400 days', now() - interval '400 days', true, ${seededAclId('f')}
    from generate_series(0, ${folders - 1}) f`);
}

/**
 * A service over its own embedded Postgres with `rows` contents seeded, an ORM on the same database
 * (for EXPLAIN), and an administrator session; `cleanup` registers the teardown.
 */
export async function startSeededService(name: string, rows: number, cleanup: (fn: () => Promise<void> | void) => void, shapeRows = rows) {
  const tmp = makeTempDir(name);
  cleanup(() => removeDir(tmp));
  const logger = createLogger('warn');
  const postgres = await startEmbeddedPostgres({ directory: path.join(tmp, 'pg'), logger });
  cleanup(() => postgres.stop());
  const service = await startServiceChild(path.join(tmp, 'data'), { DATABASE_URL: postgres.url });
  cleanup(() => service.stop());
  // with the entities: the search benchmark builds the service's statements to EXPLAIN them
  const orm = await createOrm(postgres.url, logger, { poolMax: 2, entities });
  cleanup(() => orm.close(true));
  const t0 = performance.now();
  await seedContents(orm, rows, { shapeRows });
  console.log(`seeding took ${fmt((performance.now() - t0) / 1000)} s`);
  const session = await login(service.baseUrl);
  return { service, orm, session, userSession: await benchUserSession(service.baseUrl, session, orm) };
}

/** The bench user (a USER), made a member of its groups (SQL: 200 groups), and a session of it. */
async function benchUserSession(baseUrl: string, adminSession: string, orm: Orm): Promise<string> {
  const password = 'bench-user-password';
  const admin = `${baseUrl}/api/v1/access.svc.admin/v1`;
  const created = await fetch(`${admin}/user?sessionId=${adminSession}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userName: BENCH_USER, password, roles: ['USER'] }),
  });
  if (created.status !== 201) throw new Error(`creating ${BENCH_USER}: ${created.status} ${await created.text()}`);
  const client = orm.em.getConnection().getClient();
  await client.executeQuery(CompiledQuery.raw(`insert into user_group (name, created_by) select 'g' || g, 'admin' from generate_series(0, ${SEEDED_GROUPS - 1}) g`));
  await client.executeQuery(CompiledQuery.raw(`insert into group_member (group_name, user_name) select 'g' || g, '${BENCH_USER}' from generate_series(0, ${BENCH_USER_GROUPS - 1}) g`));
  const answer = await fetch(`${baseUrl}/api/v1/authenticate?user=${BENCH_USER}&password=${password}`, { method: 'POST' });
  if (answer.status !== 200) throw new Error(`login of ${BENCH_USER}: ${answer.status}`);
  return (await answer.json()) as string;
}
