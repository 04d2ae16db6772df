import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, sql, succeeded } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { storeTexts } from './extraction-job.js';
import { settleEntryWords, type ResourceToIndex } from './operations.js';

/*
 * An entry shown on a resource (restore, check-in without a file) while that resource's text is being
 * stored (docs/search.md, "An entry shown while its text is stored"): whichever of the two statements
 * computes its words first, and whichever commits first, the entry's words end with the text, and a
 * search by that text finds it. Each side is held at a point of its own by a test trigger that waits
 * for an advisory lock the test holds: the text's statement after its words trigger ran (uncommitted),
 * the entry's statement after its words were written (uncommitted).
 */
let service: TestService;
let holder: pg.Client;
beforeAll(async () => {
  // no job extracts the uploads' texts: what is stored is the test's alone
  service = await startTestService({ JOB_CONCURRENCY: '0' });
  holder = new pg.Client({ connectionString: service.config.DATABASE_URL! });
  await holder.connect();
  await sql(service, `create table race_hold (id text primary key, key bigint not null)`);
  await sql(
    service,
    `create function race_hold() returns trigger language plpgsql as $$
     begin
       if tg_table_name = 'entry' then
         perform pg_advisory_xact_lock_shared(h.key) from race_hold h where h.id = new.id;
       else
         perform pg_advisory_xact_lock_shared(h.key) from race_hold h where h.id = new.resource_id;
       end if;
       return null;
     end $$`,
  );
  // named to fire after the words triggers of each table (triggers of one event fire in name order)
  await sql(service, `create trigger zz_race_hold after insert or update on resource_text for each row execute function race_hold()`);
  await sql(service, `create trigger zz_race_hold after update on entry for each row execute function race_hold()`);
});
afterAll(async () => {
  await holder?.end();
  await service?.stop();
});

const repositoryId = 'svc.repository.default';
let keys = 0;

/** Holds the statements that write row `id` (an entry, or a resource's text) before they commit, until `release`. */
async function hold(id: string): Promise<{ release: () => Promise<void> }> {
  const key = ++keys;
  await holder.query('select pg_advisory_lock($1)', [key]);
  await sql(service, `insert into race_hold (id, key) values (?, ?)`, [id, key]);
  return { release: async () => void (await holder.query('select pg_advisory_unlock($1)', [key])) };
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited 10 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const isWaiting = async (pattern: string) => (await sql(service, `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like ?`, [pattern])).length > 0;
/** Until a statement matching `pattern` waits for a lock (a hold, or another transaction). */
const waiting = (pattern: string) => until(`a statement like ${pattern} to wait`, () => isWaiting(pattern));

/**
 * Until `work` has ended, or a statement waits for the other side's transaction to end (not for a hold):
 * a check-in's words rows are the text's too, and the side committing last may wait for the other.
 */
async function doneOrWaiting(work: Promise<unknown>): Promise<void> {
  let done = false;
  void work.then(
    () => (done = true),
    () => (done = true),
  );
  const waitsForTransaction = async () =>
    (await sql(service, `select 1 from pg_stat_activity where wait_event_type = 'Lock' and wait_event in ('transactionid', 'tuple')`)).length > 0;
  await until('the work to end or to wait for the other side', async () => done || (await waitsForTransaction()));
}

const textStatement = '%insert into resource_text%';
const entryStatement = '%update%entry%';

/** A content whose resource has no text yet (its text is queued, and no job takes it). */
async function contentWithoutText(name: string): Promise<{ id: string; resource: ResourceToIndex }> {
  const content = await newContent(service, { name, bytes: 'unread', mimeType: 'text/plain' });
  const [resource] = await sql<ResourceToIndex>(service, `select id, repository_id as "repositoryId", name, mime_type as "mimeType", file_size::float8 as "fileSize", storage_path as "storagePath" from resource where id = ?`, [content.resource.id]);
  return { id: content.id, resource: resource! };
}

/** Stores a resource's text as an extraction job does (`storeTexts`). */
const storeText = (resource: ResourceToIndex, text: string) =>
  storeTexts(service.services, service.services.orm.em.fork() as EntityManager, repositoryId, [{ resource, text: { resourceId: resource.id, text, truncated: false, notes: [] } }]);

/** The entry's words equal those computed now from its row and text, and a search by the text finds it. */
async function expectFoundByText(contentId: string, word: string): Promise<void> {
  const [row] = await sql<{ equal: boolean | null }>(
    service,
    `select (select w.words from entry_visible_words w where w.entry_id = e.id) = entry_words(e.name, e.resource_id) as equal from entry e where e.id = ?`,
    [contentId],
  );
  expect(row!.equal, 'the kept words equal the row and its text').toBe(true);
  const found = await succeeded(service, 'GET', '/content/search/by-text', undefined, { searchText: word });
  expect((found.entries as { id: string }[]).map((entry) => entry.id)).toContain(contentId);
}

/** The entry shown by restoring it: deactivated first (its text is not there yet). */
async function deactivated(name: string) {
  const content = await contentWithoutText(name);
  await succeeded(service, 'DELETE', `/content/${content.id}`);
  return { ...content, show: () => succeeded(service, 'POST', `/content/${content.id}/restore`), held: content.id };
}

/** The entry shown by a check-in without a file: the working copy, on the same resource, becomes the latest version. */
async function checkedOut(name: string) {
  const content = await contentWithoutText(name);
  const workingCopy = await succeeded(service, 'POST', `/content/${content.id}/check-out`);
  return { ...content, id: workingCopy.id as string, show: () => succeeded(service, 'POST', `/content/${workingCopy.id}/check-in`), held: workingCopy.id as string };
}

/** Not an entry shown, but its words written anew all the same: a rename of a visible entry. */
async function renamed(name: string) {
  const content = await contentWithoutText(name);
  return { ...content, show: () => succeeded(service, 'PATCH', `/content/${content.id}`, { name: `renamed-${name}` }), held: content.id };
}

describe('an entry shown on a resource while its text is stored', { timeout: 60_000 }, () => {
  for (const [verb, shown] of [
    ['restore', deactivated],
    ['check-in without a file', checkedOut],
    ['rename', renamed],
  ] as const) {
    it(`${verb}: the text stored first, the entry committed first`, async () => {
      const entry = await shown(`${verb}-tt.txt`);
      const text = await hold(entry.resource.id);
      const storing = storeText(entry.resource, 'harbour lights tt');
      await waiting(textStatement);
      const showing = entry.show();
      await doneOrWaiting(showing);
      await text.release();
      await Promise.all([storing, showing]);
      await expectFoundByText(entry.id, 'tt');
    });

    it(`${verb}: the text stored first, the text committed first`, async () => {
      const entry = await shown(`${verb}-tu.txt`);
      const text = await hold(entry.resource.id);
      const shownEntry = await hold(entry.held);
      const storing = storeText(entry.resource, 'harbour lights tu');
      await waiting(textStatement);
      const showing = entry.show();
      await waiting(entryStatement);
      await text.release();
      await doneOrWaiting(storing);
      await shownEntry.release();
      await Promise.all([storing, showing]);
      await expectFoundByText(entry.id, 'tu');
    });

    it(`${verb}: the entry shown first, the entry committed first`, async () => {
      const entry = await shown(`${verb}-uu.txt`);
      const shownEntry = await hold(entry.held);
      const text = await hold(entry.resource.id);
      const showing = entry.show();
      await waiting(entryStatement);
      const storing = storeText(entry.resource, 'harbour lights uu');
      // the text's statement reaches its hold (or, after a check-in's first step, waits for the old version's words row)
      await waiting(textStatement);
      await shownEntry.release();
      await doneOrWaiting(showing);
      await text.release();
      await Promise.all([storing, showing]);
      await expectFoundByText(entry.id, 'uu');
    });

    it(`${verb}: the entry shown first, the text committed first`, async () => {
      const entry = await shown(`${verb}-ut.txt`);
      const shownEntry = await hold(entry.held);
      const showing = entry.show();
      await waiting(entryStatement);
      const storing = storeText(entry.resource, 'harbour lights ut');
      await doneOrWaiting(storing);
      await shownEntry.release();
      await Promise.all([storing, showing]);
      await expectFoundByText(entry.id, 'ut');
    });
  }

  /**
   * A words row another transaction holds while its entry is free (another store of the same
   * resource's text, still running): the settle skips it first, waiting for nothing, then waits for it
   * holding no entry row (a writer of that entry is not kept waiting), and ends with the words right.
   */
  it('a words row held by another transaction: settled after it ends, no entry row held meanwhile', async () => {
    const entry = await contentWithoutText('held-words.txt');
    await storeText(entry.resource, 'harbour lights hw');
    // the words made stale (without the text), as an entry's writer that read the resource too early leaves them
    await sql(service, `update entry_visible_words w set words = entry_name_words(e.name) from entry e where e.id = w.entry_id and e.id = ?`, [entry.id]);
    const writer = new pg.Client({ connectionString: service.config.DATABASE_URL! });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query('select 1 from entry_visible_words where entry_id = $1 for update', [entry.id]);
      const settling = settleEntryWords(service.services.orm.em.fork() as EntityManager, [entry.resource.id]);
      await waiting('%update entry_visible_words w set words = t.words%');
      const { rows } = await holder.query(`select id from entry where id = $1 for update nowait`, [entry.id]);
      expect(rows, 'the entry row is free while the settle waits').toHaveLength(1);
      await writer.query('commit');
      await settling;
    } finally {
      await writer.end();
    }
    await expectFoundByText(entry.id, 'hw');
  });

  /**
   * A statement showing many entries against a batch of their texts: no deadlock, whichever starts
   * first (the text's side waits for the entries' rows one at a time, holding none), and every entry
   * ends with its text.
   */
  it('one statement showing 20 entries, a batch of their 20 texts: either first, every entry found by its text', async () => {
    for (const first of ['entries', 'texts'] as const) {
      const entries = await Promise.all(Array.from({ length: 20 }, (_, i) => contentWithoutText(`many-${first}-${i}.txt`)));
      const ids = entries.map((entry) => entry.id);
      await sql(service, `update entry set active = false where id = any(array[?]::text[])`, [ids]);
      const word = `batch${first}`;
      const texts = entries.map(({ resource }) => ({ resource, text: { resourceId: resource.id, text: `${word} ${resource.id}`, truncated: false, notes: [] } }));
      const writer = new pg.Client({ connectionString: service.config.DATABASE_URL! });
      await writer.connect();
      try {
        await writer.query('begin');
        let storing: Promise<unknown>;
        if (first === 'entries') {
          // shown (uncommitted) in reverse order of the batch, then the batch is stored
          await writer.query(`update entry set active = true where id = any($1::text[])`, [[...ids].reverse()]);
          storing = storeTexts(service.services, service.services.orm.em.fork() as EntityManager, repositoryId, texts);
          await doneOrWaiting(storing);
        } else {
          // the batch's statement held after its first text's words trigger, the entries shown meanwhile
          const text = await hold(entries[0]!.resource.id);
          storing = storeTexts(service.services, service.services.orm.em.fork() as EntityManager, repositoryId, texts);
          await waiting(textStatement);
          await writer.query(`update entry set active = true where id = any($1::text[])`, [[...ids].reverse()]);
          await text.release();
          await doneOrWaiting(storing);
        }
        await writer.query('commit');
        await storing;
      } finally {
        await writer.end();
      }
      const [row] = await sql<{ stale: number }>(
        service,
        `select count(*)::int as stale from entry e left join entry_visible_words w on w.entry_id = e.id
          where e.id = any(array[?]::text[]) and w.words is distinct from entry_words(e.name, e.resource_id)`,
        [ids],
      );
      expect(row!.stale, `${first} first: entries whose words differ from their row and text`).toBe(0);
      const found = await succeeded(service, 'GET', '/content/search/by-text', undefined, { searchText: word, limit: '50' });
      expect(found.count, `${first} first`).toBe(20);
    }
  });
});
