import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeVisibility, defaultVisibility, extracted, fileForm, newContent, newFolder, sql, succeeded } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { SnapshotReaders } from '../../db/snapshot-readers.js';
import { pageOf, type SearchOptions, type SearchScope } from './entry-query.js';
import { buildVisibleWordsQuery, matchSpread, relevanceCandidates, type MatchSpread, type WordCounts } from './visible-words.js';

/*
 * The words of visible entries (Migration20261123050000EntryVisibleWords), which answer searches that
 * are only a full-text match, equal the entry rows and their texts after every verb; and those searches
 * answer what the general query answers (the same entries, order and count).
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const ok = (method: string, path: string, body?: FormData | Record<string, unknown>, query: Record<string, string> = {}) => succeeded(service, method, path, body, query);

/**
 * Compares the kept words (with their entries' ACL and owner) with the entry rows, and the kept counts of each word and ACL
 * (Migration20261123170000EntryVisibleWordCounts, Migration20261128151000WordCountsPerAcl: the count rows and the pending rows,
 * Migration20261207190000WordCountPending) and the postings of each word
 * (Migration20261129130000EntryVisiblePostings) with the kept words, in one statement (one snapshot: extraction jobs may commit meanwhile).
 */
async function expectWordsEqualRows(step: string): Promise<void> {
  const [both] = await sql<{ kept: string[] | null; rows: string[] | null; keptCounts: string[] | null; wordCounts: string[] | null; keptPostings: string[] | null; postings: string[] | null }>(
    service,
    `select (select array_agg(concat_ws('|', entry_id, repository_id, entry_type, created_at, acl_id, owner, words) order by entry_id) from entry_visible_words) as kept,
            (select array_agg(concat_ws('|', id, repository_id, entry_type, created_at, acl_id, owner, entry_words(name, resource_id)) order by id) from entry where ${defaultVisibility}) as rows,
            (select array_agg(concat_ws('|', repository_id, word, entry_type, acl_id, n) order by repository_id, word, entry_type, acl_id) from (
              select repository_id, word, entry_type, acl_id, sum(n) as n from (
                select repository_id, word, entry_type, acl_id, n from entry_visible_word_count
                union all
                select repository_id, word, entry_type, acl_id, n from entry_visible_word_pending cross join unnest(words) as word) rows
               group by 1, 2, 3, 4 having sum(n) <> 0) kept) as "keptCounts",
            (select array_agg(concat_ws('|', repository_id, word, entry_type, acl_id, n) order by repository_id, word, entry_type, acl_id) from (
              select repository_id, word, entry_type, acl_id, count(*) as n from entry_visible_words cross join unnest(tsvector_to_array(words)) as word group by 1, 2, 3, 4) counted) as "wordCounts",
            (select array_agg(concat_ws('|', repository_id, word, created_at, entry_id) order by repository_id, word, created_at, entry_id) from entry_visible_posting) as "keptPostings",
            (select array_agg(concat_ws('|', repository_id, word, created_at, entry_id) order by repository_id, word, created_at, entry_id)
               from entry_visible_words cross join unnest(tsvector_to_array(words)) as word) as postings`,
  );
  expect(both!.kept, step).toEqual(both!.rows);
  expect(both!.keptCounts, `${step}: the counts of each word`).toEqual(both!.wordCounts);
  expect(both!.keptPostings, `${step}: the postings of each word`).toEqual(both!.postings);
}

/** A text content whose text has been extracted. */
async function indexed(name: string, text: string, parentId?: string): Promise<Record<string, any>> {
  const content = await newContent(service, { name, bytes: text, mimeType: 'text/plain', parentId });
  await extracted(service, content.id);
  return content;
}

/** names and count of a search through REST */
async function search(path: string, query: Record<string, string>): Promise<{ count: number; names: string[] }> {
  const body = await ok('GET', path, undefined, query);
  return { count: body.count as number, names: (body.entries as { name: string }[]).map((e) => e.name) };
}

/**
 * One search text every way it is answered: by-text by relevance and fullText() alone (from
 * entry_visible_words), by-text with orderBy and with includeVersions (the general query).
 */
const everyPath = async (searchText: string) => [
  await search('/content/search/by-text', { searchText }),
  await search('/content/search/by-text', { searchText, orderBy: 'createdAt' }),
  await search('/content/search/by-condition', { condition: `fullText('${searchText.replace(/'/g, "''")}')` }),
  await search('/content/search/by-text', { searchText, orderBy: 'createdAt', includeVersions: 'true' }),
];

/** What `everyPath` answers for entries without older versions: by relevance (`ranked`, else as `names`), then by creation */
const answered = (count: number, names: string[], ranked = names) => [{ count, names: ranked }, { count, names }, { count, names }, { count, names }];

// each test waits for the extraction of several uploads' texts in turn: three went past vitest's 30 s at load 20
describe('the words of visible entries', { timeout: 120_000 }, () => {
  it('equal the rows and texts after create, text, rename, versions, copy, delete, restore and folder deletion', async () => {
    const folder = await newFolder(service, 'worded');
    const a = await indexed('alpha-report.txt', 'quarterly figures', folder.id);
    const b = await indexed('beta.txt', 'minutes of the meeting', folder.id);
    await expectWordsEqualRows('create, texts extracted');
    // as a reindex rewrites a text
    await sql(service, `update resource_text set text = 'annual figures' where resource_id = (select resource_id from entry where id = ?)`, [a.id]);
    await expectWordsEqualRows('a text is replaced');
    // a text that leaves the words as they are (a reindex of an unchanged file; a binary upload's empty
    // text) rewrites nothing: the words row keeps its version, so no posting or count trigger ran
    const wordsVersion = async (id: string) => (await sql<{ xmin: string }>(service, `select xmin::text from entry_visible_words where entry_id = ?`, [id]))[0]!.xmin;
    const unchanged = await wordsVersion(a.id);
    await sql(service, `update resource_text set text = text where resource_id = (select resource_id from entry where id = ?)`, [a.id]);
    expect(await wordsVersion(a.id)).toBe(unchanged);
    await sql(service, `delete from resource_text where resource_id = (select resource_id from entry where id = ?)`, [b.id]);
    const nameOnly = await wordsVersion(b.id);
    await sql(service, `insert into resource_text (resource_id, repository_id, text) select resource_id, repository_id, '' from entry where id = ?`, [b.id]);
    expect(await wordsVersion(b.id)).toBe(nameOnly);
    await expectWordsEqualRows('a text rewritten as it was, and an empty text');
    await sql(service, `update resource_text set text = 'minutes of the meeting' where resource_id = (select resource_id from entry where id = ?)`, [b.id]);
    expect(await wordsVersion(b.id)).not.toBe(nameOnly);
    await expectWordsEqualRows('the empty text replaced');
    await ok('PATCH', `/content/${a.id}`, { name: 'gamma-report.txt' });
    await expectWordsEqualRows('rename');
    // the folder's ACL changes its contents' effective ACL: their words move to the new ACL's counts
    await ok('PUT', `/folder/${folder.id}/acl`, { entries: [{ principal: 'EVERYONE', permission: 'read' }] });
    await expectWordsEqualRows('an ACL change');
    const replaced = await ok('PUT', `/content/${a.id}/resource`, fileForm('new bytes', 'gamma-report.md'));
    await expectWordsEqualRows('replace (a new version, its text on the way)');
    await extracted(service, replaced.id);
    await expectWordsEqualRows('replace, its text extracted');
    await changeVisibility(service, b.id, expectWordsEqualRows, fileForm('checked in', 'beta.txt'));
    await sql(service, `delete from resource_text where resource_id = (select resource_id from entry where id = ?)`, [b.id]);
    await expectWordsEqualRows('a text goes');
    await ok('DELETE', `/folder/${folder.id}`, undefined, { recursive: 'true' });
    await expectWordsEqualRows('recursive folder deletion');
  });

  it('answer full-text-only searches as the general query does, and are what those searches read', async () => {
    // one after another, so that creation times order them
    const texts: [string, string][] = [
      ['one.txt', 'harbour harbour harbour lights'],
      ['two.txt', 'a harbour'],
      ['three-harbour.txt', 'nothing here'],
      ['four.txt', 'harbour and harbour'],
      ['five.txt', 'nothing to see'],
    ];
    const made: Record<string, any>[] = [];
    for (const [name, text] of texts) made.push(await indexed(name, text));
    const byText = (query: Record<string, string>) => search('/content/search/by-text', { searchText: 'harbour', ...query });
    const fullText = (query: Record<string, string>) => search('/content/search/by-condition', { condition: "fullText('harbour')", ...query });
    // the general query: the same search with an orderBy (not answered from entry_visible_words)
    const general = await search('/content/search/by-text', { searchText: 'harbour', orderBy: 'createdAt' });
    expect(general).toEqual({ count: 4, names: ['one.txt', 'two.txt', 'three-harbour.txt', 'four.txt'] });

    // relevance: the name (weight A) first, then how often the text says it; ties oldest first
    const ranked = ['three-harbour.txt', 'one.txt', 'four.txt', 'two.txt'];
    expect(await byText({})).toEqual({ count: 4, names: ranked });
    const [generalRanked] = await sql<{ names: string[] }>(
      service,
      `select array_agg(name order by ts_rank(entry_words(name, resource_id), websearch_to_tsquery('simple', 'harbour')) desc, created_at, id) as names
         from entry where ${defaultVisibility} and entry_words(name, resource_id) @@ websearch_to_tsquery('simple', 'harbour')`,
    );
    expect(generalRanked!.names).toEqual(ranked);
    expect(await byText({ limit: '2', offset: '1' })).toEqual({ count: 4, names: ranked.slice(1, 3) });
    expect(await byText({ limit: '2', offset: '10' })).toEqual({ count: 4, names: [] });
    expect(await byText({ orderingDirection: 'desc' })).toEqual({ count: 4, names: ['three-harbour.txt', 'one.txt', 'four.txt', 'two.txt'] });
    expect(await byText({ entryType: 'FOLDER' })).toEqual({ count: 0, names: [] });
    // Relevance has two ways to an answer: the ranked page with its count run beside it (another
    // connection, the same snapshot), and, with no such connection free, one statement that ranks and counts.
    const rankedPagings: Record<string, string>[] = [{}, { limit: '2', offset: '1' }, { limit: '2', offset: '10' }, { orderingDirection: 'desc' }, { entryType: 'FOLDER' }];
    const answersOf = async () => {
      const answers = [];
      for (const paging of rankedPagings) answers.push(await byText(paging));
      return answers;
    };
    const besideAnswers = await answersOf();
    const readers = service.services.snapshotReaders;
    service.services.snapshotReaders = new SnapshotReaders(service.config.DATABASE_URL!, service.services.logger, 0);
    try {
      expect(service.services.snapshotReaders.free).toBe(false);
      expect(await answersOf()).toEqual(besideAnswers);
    } finally {
      await service.services.snapshotReaders.close();
      service.services.snapshotReaders = readers;
    }
    // more at once than the ORM's pool (20) and the readers (4) have connections: each search gets its
    // count beside it or counts by itself, and none waits on a connection that another one holds
    const many = await Promise.all(Array.from({ length: 40 }, () => byText({})));
    expect(many).toEqual(Array.from({ length: 40 }, () => besideAnswers[0]));

    // the words of the name and of the text together match a query, on every path
    expect(await everyPath('one harbour')).toEqual(answered(1, ['one.txt']));
    expect(await everyPath('three -lights')).toEqual(answered(1, ['three-harbour.txt']));
    expect(await everyPath('harbour -three')).toEqual(answered(3, ['one.txt', 'two.txt', 'four.txt']));
    expect(await everyPath('"harbour lights" or five')).toEqual(answered(2, ['one.txt', 'five.txt'], ['five.txt', 'one.txt']));
    expect(await everyPath('harb* txt')).toEqual(answered(4, ['one.txt', 'two.txt', 'three-harbour.txt', 'four.txt'], ['three-harbour.txt', 'one.txt', 'four.txt', 'two.txt']));

    // fullText() alone: creation order, as every search without orderBy
    expect(await fullText({})).toEqual(general);
    expect(await fullText({ orderingDirection: 'desc' })).toEqual({ count: 4, names: [...general.names].reverse() });
    expect(await fullText({ limit: '1', offset: '1' })).toEqual({ count: 4, names: ['two.txt'] });
    expect(await fullText({ limit: '1', offset: '9' })).toEqual({ count: 4, names: [] });
    expect(await search('/content/search/by-condition', { condition: "fullText('\"harbour lights\" or minutes')" })).toEqual({ count: 1, names: ['one.txt'] });
    expect(await search('/content/search/by-condition', { condition: "fullText('harb*') and name like 't*'" })).toEqual({ count: 2, names: ['two.txt', 'three-harbour.txt'] });

    // creation order has two ways to a page (walking the creation index, or sorting the matches), chosen by the count: both give the same pages
    const [repository] = await sql<{ id: string }>(service, `select id from repository where name = 'default'`);
    const scope = { principal: { userName: 'admin', roles: ['ADMIN'] }, repository: { id: repository!.id }, em: service.services.orm.em } as unknown as SearchScope;
    const client = service.services.orm.em.getConnection().getClient();
    const namesBy = async (statement: { sql: string; params: unknown[] }) => {
      const ids = (await client.executeQuery<{ id: string }>(CompiledQuery.raw(statement.sql, statement.params))).rows.map((row) => row.id);
      const page = pageOf(scope, ids);
      return (await client.executeQuery<{ name: string }>(CompiledQuery.raw(page.sql, page.params))).rows.map((row) => row.name);
    };
    const pagings = [{}, { limit: 2, offset: 1 }, { limit: 3, orderingDirection: 'desc' }, { offset: 3 }, { entryType: 'FOLDER' }] as SearchOptions[];
    for (const options of pagings) {
      const query = buildVisibleWordsQuery(scope, 'harbour', options);
      expect(await namesBy(query.walk), JSON.stringify(options)).toEqual(await namesBy(query.sorted));
    }
    expect(await namesBy(buildVisibleWordsQuery(scope, 'harbour', { limit: 2, offset: 1 }).walk)).toEqual(['two.txt', 'three-harbour.txt']);

    // every path reads entry_visible_words for the entries it holds: a row taken out of it (never done by the service) shows
    await sql(service, `delete from entry_visible_words where entry_id = ?`, [made[1]!.id]);
    expect((await byText({})).count).toBe(3);
    expect((await fullText({ limit: '1' })).count).toBe(3);
    expect((await search('/content/search/by-text', { searchText: 'harbour', orderBy: 'createdAt' })).count).toBe(3);
    expect((await search('/content/search/by-text', { searchText: 'harbour', includeVersions: 'true' })).count).toBe(3);
    await sql(service, `insert into entry_visible_words (entry_id, repository_id, entry_type, created_at, words, acl_id, owner) select id, repository_id, entry_type, created_at, entry_words(name, resource_id), acl_id, owner from entry where id = ?`, [made[1]!.id]);
  });

  it('find a name by a word with . _ - / in it as typed, and a text by the word as its text says it and by its parts', async () => {
    const folder = await newFolder(service, 'separated');
    for (const name of ['invoice-2024.txt', 'Q3-report.md', 'draft-v1.2.md', 'my_file.txt', 'reports-2024.csv']) {
      await indexed(name, 'unrelated words', folder.id);
    }
    await indexed('letter.txt', 'please pay invoice-2024.txt and the Q3-report soon', folder.id);
    expect(await everyPath('invoice-2024.txt')).toEqual(answered(2, ['invoice-2024.txt', 'letter.txt']));
    // the text's `invoice-2024.txt` is kept whole and followed by its words (storableText): its parts find it too
    expect(await everyPath('invoice-2024')).toEqual(answered(2, ['invoice-2024.txt', 'letter.txt']));
    expect(await everyPath('Q3-report')).toEqual(answered(2, ['Q3-report.md', 'letter.txt']));
    expect(await everyPath('draft-v1.2')).toEqual(answered(1, ['draft-v1.2.md']));
    expect(await everyPath('"draft v1.2"')).toEqual(answered(1, ['draft-v1.2.md']));
    expect(await everyPath('my_file.txt')).toEqual(answered(1, ['my_file.txt']));
    expect(await everyPath('reports/2024')).toEqual(answered(1, ['reports-2024.csv']));
    // a prefix of such a word, and an `or` with nothing on one side
    expect((await everyPath('invoice-20*')).map((answer) => answer.names)).toContainEqual(['invoice-2024.txt', 'letter.txt']);
    expect(await everyPath('draft-v1*')).toEqual(answered(1, ['draft-v1.2.md']));
    expect(await everyPath('-draft-v1* unrelated')).toEqual(answered(4, ['invoice-2024.txt', 'Q3-report.md', 'my_file.txt', 'reports-2024.csv']));
    expect(await everyPath('Q3-report or')).toEqual(await everyPath('Q3-report'));
    expect(await everyPath('or Q3-report')).toEqual(await everyPath('Q3-report'));
    // the parts in another order are not the word
    expect(await everyPath('2024-invoice')).toEqual(answered(0, []));
    // excluded as typed, from the name and from the text
    expect(await everyPath('2024')).toEqual(answered(3, ['invoice-2024.txt', 'reports-2024.csv', 'letter.txt']));
    expect(await everyPath('2024 -invoice-2024')).toEqual(answered(1, ['reports-2024.csv']));
    expect(await everyPath('soon -invoice-2024.txt')).toEqual(answered(0, []));
    expect(await everyPath('soon -Q3-report')).toEqual(answered(0, []));
    // exclusions only: every entry whose name and text lack the words (the last path counts older versions too)
    const countsOf = async (searchText: string) => (await everyPath(searchText)).map((answer) => answer.count);
    const visible = (await search('/content/search', {})).count;
    const withVersions = (await search('/content/search', { includeVersions: 'true' })).count;
    expect(await countsOf('-separated')).toEqual([visible - 1, visible - 1, visible - 1, withVersions - 1]);
    expect(await countsOf('-unrelated -separated')).toEqual([visible - 6, visible - 6, visible - 6, withVersions - 6]);
  });

  it('fold the case of every letter, not only of ASCII ones (names, texts, prefixes, ilike)', async () => {
    const folder = await newFolder(service, 'unicode');
    await indexed('Café_Menü.txt', 'nothing', folder.id);
    await indexed('ÉCOLE.txt', 'Ωmega', folder.id);
    await indexed('brief.txt', 'Ärger über Öl', folder.id);
    expect(await everyPath('CAFÉ')).toEqual(answered(1, ['Café_Menü.txt']));
    expect(await everyPath('menü')).toEqual(answered(1, ['Café_Menü.txt']));
    expect(await everyPath('école')).toEqual(answered(1, ['ÉCOLE.txt']));
    expect(await everyPath('ωMEGA')).toEqual(answered(1, ['ÉCOLE.txt']));
    expect(await everyPath('ärger ÖL')).toEqual(answered(1, ['brief.txt']));
    expect(await everyPath('éco*')).toEqual(answered(1, ['ÉCOLE.txt']));
    expect(await search('/content/search/by-condition', { condition: "name ilike '*école*'" })).toEqual({ count: 1, names: ['ÉCOLE.txt'] });
  });
});

describe('the counts of each word', () => {
  it('follow a folder of many entries moved and given another ACL (one statement each), and a rename in the same subtree', async () => {
    const open = await newFolder(service, 'words-open');
    const closed = await newFolder(service, 'words-closed');
    await ok('PUT', `/folder/${closed.id}/acl`, { inherit: false, entries: [] });
    const moved = await newFolder(service, 'words-moved', open.id);
    const sub = await newFolder(service, 'words-sub', moved.id);
    // shared words under one ACL, a word of each, a text for some (its words move too)
    const contents = await Promise.all(Array.from({ length: 12 }, (_, i) => newContent(service, { name: `many-${i % 3}-word${i}.txt`, bytes: `moving words ${i}`, mimeType: 'text/plain', parentId: i % 2 ? sub.id : moved.id })));
    await Promise.all(contents.slice(0, 4).map((content) => extracted(service, content.id)));
    await expectWordsEqualRows('a subtree created');
    // every entry of the subtree changes its effective ACL in acl_recompute's one statement
    await ok('PATCH', `/folder/${moved.id}`, { parentId: closed.id });
    await expectWordsEqualRows('the subtree moved under a closed folder');
    await ok('PUT', `/folder/${moved.id}/acl`, { entries: [{ principal: 'EVERYONE', permission: 'read' }] });
    await expectWordsEqualRows('the subtree given its own ACL');
    // one statement that changes a name and the ACL of one row, and only the ACL of the others
    await sql(service, `update entry set name = case when id = ? then 'renamed-many.txt' else name end, acl_id = (select acl_id from entry where id = ?) where id = any(array[?]::text[])`, [
      contents[0]!.id,
      open.id,
      contents.map((content) => content.id),
    ]);
    await expectWordsEqualRows('names and ACLs changed in one statement');
    await ok('PATCH', `/folder/${moved.id}`, { parentId: open.id });
    await expectWordsEqualRows('the subtree moved back');
  });

  it('follow the words under concurrent writes and folds, and count one-word searches without visiting the matches', async () => {
    const folder = await newFolder(service, 'counted');
    // at once: every statement adds its own rows for the words they share; folds (one statement in
    // fifty, here forced too) take whatever rows no other fold holds
    const [repository] = await sql<{ id: string }>(service, `select id from repository where name = 'default'`);
    const fold = () => sql(service, `select entry_visible_word_count_fold(?, array['lantern', 'counted', 'txt', 'shared'])`, [repository!.id]);
    await Promise.all([
      ...Array.from({ length: 16 }, (_, i) => indexed(`lantern-${i}.txt`, `shared words ${i % 2 === 0 ? 'lantern' : 'other'}`, folder.id)),
      fold(),
      fold(),
    ]);
    await expectWordsEqualRows('concurrent uploads and folds');
    await sql(service, `select entry_visible_word_count_roll_up(?)`, [repository!.id]);
    await expectWordsEqualRows('rolled up');
    await fold();
    await expectWordsEqualRows('folded');
    const [rows] = await sql<{ n: string }>(service, `select count(*) as n from entry_visible_word_count where repository_id = ? and word = 'lantern'`, [repository!.id]);
    expect(Number(rows!.n)).toBe(1);
    // created at once, so in no known order: first is one whose name and text both say it
    const first = await search('/content/search/by-text', { searchText: 'lantern', limit: '1' });
    expect(first.count).toBe(16);
    expect(first.names).toEqual([expect.stringMatching(/^lantern-\d*[02468]\.txt$/)]);
    expect((await search('/content/search/by-condition', { condition: "fullText('LANTERN')", limit: '1' })).count).toBe(16);
    expect((await search('/content/search/by-text', { searchText: 'lantern', entryType: 'FOLDER' })).count).toBe(0);

    // a search that sums many rows for its word (as a bulk load in one transaction leaves them) folds them
    await sql(service, `insert into entry_visible_word_count select ?, 'lantern', 'CONTENT', 1 - 2 * (i % 2) from generate_series(1, 1500) i`, [repository!.id]);
    expect((await search('/content/search/by-text', { searchText: 'lantern', limit: '1' })).count).toBe(16);
    await expect.poll(async () => Number((await sql<{ n: string }>(service, `select count(*) as n from entry_visible_word_count where word = 'lantern'`))[0]!.n)).toBe(1);
    await expectWordsEqualRows('folded by a search');
    // a search that finds many pending rows in its repository (as a transaction that changes many entries' words leaves them) rolls them up
    await sql(service, `insert into entry_visible_word_pending select ?, null, 'CONTENT', array['lantern', 'unsaid'], 1 - 2 * (i % 2) from generate_series(1, 1500) i`, [repository!.id]);
    expect((await search('/content/search/by-text', { searchText: 'lantern', limit: '1' })).count).toBe(16);
    await expect.poll(async () => Number((await sql<{ n: string }>(service, `select count(*) as n from entry_visible_word_pending`))[0]!.n)).toBe(0);
    await expectWordsEqualRows('rolled up by a search');
    // counted anew (after a bulk load with the triggers disabled): one row for each word, type and ACL
    await sql(service, `select entry_visible_word_count_rebuild()`);
    await sql(service, `select entry_visible_posting_rebuild()`);
    await expectWordsEqualRows('rebuilt');
    const [shape] = await sql<{ rows: string; keys: string }>(service, `select count(*) as rows, count(distinct (repository_id, word, entry_type, acl_id)) as keys from entry_visible_word_count`);
    expect(shape!.rows).toBe(shape!.keys);

    // a one-word search reads its count from the counts, any other visits its matches
    const scope = { principal: { userName: 'admin', roles: ['ADMIN'] }, repository: { id: repository!.id }, em: service.services.orm.em } as unknown as SearchScope;
    const run = async (statement: { sql: string; params: unknown[] }) => (await sql<Record<string, unknown>>(service, statement.sql.replace(/\$\d+/g, '?'), statement.params))[0]!;
    expect(await run(buildVisibleWordsQuery(scope, 'Lantern', {}).wordCount)).toMatchObject({ n: '16' });
    for (const other of ['lantern shared', 'lant*', '"shared words"', '-lantern', 'lantern or other']) {
      expect(await run(buildVisibleWordsQuery(scope, other, {}).wordCount), other).toMatchObject({ n: null });
    }
    const { wordCount } = buildVisibleWordsQuery(scope, 'lantern', {});
    const plan = (await sql<{ 'QUERY PLAN': string }>(service, `explain ${wordCount.sql.replace(/\$\d+/g, '?')}`, wordCount.params)).map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toContain('on entry_visible_word_count');
    expect(plan).not.toContain('entry_visible_words');
  });

  it('count a change of an entry\'s words in one pending row, rolled up into one count row a word', async () => {
    const [repository] = await sql<{ id: string }>(service, `select id from repository where name = 'default'`);
    const parent = await newFolder(service, 'pending-parent');
    await sql(service, `select entry_visible_word_count_roll_up(?)`, [repository!.id]);
    const pending = () => sql<{ words: string[]; n: string }>(service, `select words, n from entry_visible_word_pending where repository_id = ? order by n, words`, [repository!.id]);
    // the roll-up's draw held off (its once-a-transaction mark set): the rows each change writes
    const changed = (statement: string) => sql(service, `do $$ begin perform set_config('entry_visible_word_count.folded', 'yes', true); ${statement}; end $$`);
    await changed(
      `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, created_at, last_modified_at, is_latest, parent_id)
       values ('pending-lamp', '${repository!.id}', 'FOLDER', 'pending-lamp', 'lamp-lamp-wick', 'admin', 'admin', 'admin', now(), now(), true, '${parent.id}')`,
    );
    expect(await pending()).toEqual([{ words: ['lamp', 'wick'], n: '1' }]);
    await expectWordsEqualRows('inserted, pending');
    await changed(`update entry set name = 'lamp-oil' where id = 'pending-lamp'`);
    expect(await pending()).toEqual([
      { words: ['wick'], n: '-1' },
      { words: ['lamp', 'wick'], n: '1' },
      { words: ['oil'], n: '1' },
    ]);
    await expectWordsEqualRows('renamed, pending');
    await sql(service, `select entry_visible_word_count_roll_up(?)`, [repository!.id]);
    expect(await pending()).toEqual([]);
    expect(
      await sql(service, `select word, n from entry_visible_word_count where repository_id = ? and word in ('lamp', 'oil', 'wick') order by word`, [repository!.id]),
    ).toEqual([
      { word: 'lamp', n: '1' },
      { word: 'oil', n: '1' },
    ]);
    await expectWordsEqualRows('rolled up');
    await changed(`delete from entry where id = 'pending-lamp'`);
    expect(await pending()).toEqual([{ words: ['lamp', 'oil'], n: '-1' }]);
    await expectWordsEqualRows('deleted, pending');
    await ok('DELETE', `/folder/${parent.id}`);
  });

  it('take the word of a query that is one word and nothing else, whatever characters it holds', async () => {
    const words = ["it's", 'back\\slash', "\\'", 'ünïcødé', 'plain', "''"];
    for (const word of words) {
      // quoted as textQuery quotes an operand; the word as a text's words would hold it
      const [row] = await sql<{ word: string | null; stored: string[] }>(
        service,
        `select tsquery_single_word(?::tsquery) as word, tsvector_to_array(array_to_tsvector(array[?::text])) as stored`,
        [`'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`, word],
      );
      expect(row!.stored).toEqual([word]);
      expect(row!.word, word).toBe(word);
    }
    for (const notOne of [`'a':*`, `'a':A`, `'a' & 'b'`, `!'a'`, `'a' <-> 'b'`, `'a' | 'b'`, ``]) {
      const [row] = await sql<{ word: string | null }>(service, `select tsquery_single_word(?::tsquery) as word`, [notOne]);
      expect(row!.word, notOne).toBeNull();
    }
  });
});

describe('the words index of each repository', () => {
  it('comes with the repository and goes with it (and so do its word counts), and the searches of the repository use it without checking each row\'s repository', async () => {
    const indexOf = async (repositoryId: string) =>
      (await sql<{ indexdef: string }>(service, `select indexdef from pg_indexes where indexname = 'entry_visible_words_' || md5(?)`, [repositoryId]))[0]?.indexdef;
    expect(await indexOf('svc.repository.default')).toMatch(/USING gin \(words\) WHERE \(repository_id = 'svc\.repository\.default'::text\)/);

    const created = await service.graphql<{ createRepository: { id: string } }>('mutation { createRepository(input: { name: "words-own" }) { id } }');
    expect(created.errors).toBeUndefined();
    const id = created.data!.createRepository.id;
    expect(await indexOf(id)).toBeDefined();

    // the count of a words search, as the service runs it (parameters bound): the repository's index, no per-row check
    const scope = { principal: { userName: 'admin', roles: ['ADMIN'] }, repository: { id }, em: service.services.orm.em } as unknown as SearchScope;
    const { count } = buildVisibleWordsQuery(scope, 'harbour', {});
    // an empty repository's rows are cheaper to find by the creation index: without it (in a transaction rolled back), the words index
    let plan = '';
    await service.services.orm.em
      .fork()
      .transactional(async (em) => {
        await em.execute('drop index entry_visible_words_created_idx');
        await em.execute('set local enable_seqscan = off');
        plan = (await em.execute<{ 'QUERY PLAN': string }[]>(`explain ${count.sql.replace(/\$\d+/g, '?')}`, count.params)).map((row) => row['QUERY PLAN']).join('\n');
        throw new Error('roll back');
      })
      .catch((error: Error) => {
        if (error.message !== 'roll back') throw error;
      });
    expect(plan).toContain(`Bitmap Index Scan on entry_visible_words_`);
    expect(plan).not.toMatch(/Filter: \(w\.repository_id =/);

    // what an emptied repository leaves of its word counts (rows that sum to nothing) goes with it
    await sql(service, `insert into entry_visible_word_count values (?, 'gone', 'CONTENT', 1), (?, 'gone', 'CONTENT', -1)`, [id, id]);
    expect((await service.graphql('mutation($id: ID!) { deleteRepository(repositoryId: $id) }', { id })).errors).toBeUndefined();
    expect(await indexOf(id)).toBeUndefined();
    expect(await sql(service, `select * from entry_visible_word_count where repository_id = ?`, [id])).toEqual([]);
  });
});

describe('bounded relevance', () => {
  it('ranks the newest matches of a common word and lists the rest after them, newest first, with the exact count', async () => {
    const [repository] = await sql<{ id: string }>(service, `select id from repository where name = 'default'`);
    // folders beacon-1 … beacon-N, created one minute apart (beacon-N newest); a name that says the word
    // twice ranks above the others: beacon-beacon-1 and -2 are older than the newest K, -(N - 3) is among them
    const K = relevanceCandidates;
    const N = K + 5;
    const name = (i: number) => (i <= 2 || i === N - 3 ? `beacon-beacon-${i}` : `beacon-${i}`);
    await sql(
      service,
      `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, created_at, last_modified_at, is_latest)
       select 'beacon-' || i, ?, 'FOLDER', 'beacon-' || i, case when i <= 2 or i = ? then 'beacon-beacon-' || i else 'beacon-' || i end,
              'admin', 'admin', 'admin', now() - ((? - i) || ' minutes')::interval, now(), true
         from generate_series(1, ?) i`,
      [repository!.id, N - 3, N + 1, N],
    );
    const byText = (query: Record<string, string>) => search('/content/search/by-text', { searchText: 'beacon', ...query });
    const range = (from: number, to: number) => Array.from({ length: Math.abs(to - from) + 1 }, (_, n) => name(from < to ? from + n : from - n));
    // ranked: the newest K (beacon-6 … beacon-N), the twice-said first, ties oldest first
    const ranked = [name(N - 3), ...range(6, N).filter((n) => n !== name(N - 3))];
    expect(ranked).toHaveLength(K);
    expect(await byText({ limit: '3' })).toEqual({ count: N, names: ranked.slice(0, 3) });
    // a page across the bound: the last ranked, then the older matches newest first (beacon-beacon-1 and -2 among them, unranked)
    expect(await byText({ limit: '4', offset: String(K - 1) })).toEqual({ count: N, names: [ranked[K - 1], ...range(5, 3)] });
    expect(await byText({ limit: '10', offset: String(K + 3) })).toEqual({ count: N, names: range(2, 1) });
    expect(await byText({ limit: '2', offset: String(N) })).toEqual({ count: N, names: [] });
    // orderingDirection orders the ties only: newest first
    expect(await byText({ limit: '3', orderingDirection: 'desc' })).toEqual({ count: N, names: [name(N - 3), name(N), name(N - 1)] });

    // the newest matches found every way (walking the creation index; the GIN index's matches sorted; the word's postings) are the same
    const scope = { principal: { userName: 'admin', roles: ['ADMIN'] }, repository: { id: repository!.id }, em: service.services.orm.em } as unknown as SearchScope;
    const ids = async (statement: { sql: string; params: unknown[] } | undefined) =>
      (await sql<{ entry_id: string }>(service, statement!.sql.replace(/\$\d+/g, '?'), statement!.params)).map((row) => row.entry_id);
    for (const options of [{ limit: 20 }, { limit: 20, offset: K - 10 }, { limit: 10, offset: K + 1 }] as SearchOptions[]) {
      const query = buildVisibleWordsQuery(scope, 'beacon', options);
      const both = async (spread: MatchSpread) => [...(await ids(query.rankedNewest(spread))), ...(query.newestAfterRanked(spread) ? await ids(query.newestAfterRanked(spread)) : [])];
      const walked = await both({ matches: N, found: N, visible: 0 });
      const sorted = await both({ matches: undefined, found: N, visible: N });
      expect(walked, JSON.stringify(options)).toEqual(sorted);
      expect(await both({ matches: N, found: N, visible: N, word: 'beacon' }), JSON.stringify(options)).toEqual(sorted);
      expect(walked).toHaveLength(Math.min(options.limit!, N - (options.offset ?? 0)));
    }
    await sql(service, `delete from entry where id like 'beacon-%'`);
  });

  it("answers from a word's postings what the sorted matches answer, for an administrator and for callers who may read part, as the entries change", async () => {
    const [repository] = await sql<{ id: string }>(service, `select id from repository where name = 'default'`);
    // three folders of other ACLs, their contents inheriting them (the insert trigger sets each entry's ACL)
    const folders = [await newFolder(service, 'posted-open'), await newFolder(service, 'posted-alice'), await newFolder(service, 'posted-closed')];
    // (the principals named in the ACLs do not matter here: each caller's readable ACLs are given)
    await ok('PUT', `/folder/${folders[1]!.id}/acl`, { inherit: false, entries: [{ principal: 'admin', permission: 'read' }] });
    await ok('PUT', `/folder/${folders[2]!.id}/acl`, { inherit: false, entries: [] });
    // a seeded random draw (mulberry32): the same data on every run
    let seed = 20261129;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    // words of every frequency (ant in most names, eel in a few), said once or twice; many entries share a creation time
    const vocabulary: [string, number][] = [['ant', 0.9], ['bee', 0.5], ['cat', 0.1], ['dog', 0.02], ['eel', 0.003]];
    const nameOf = () => vocabulary.flatMap(([word, p]) => (random() < p ? (random() < 0.2 ? [word, word] : [word]) : [])).join('-');
    const N = 3000;
    const rows = Array.from({ length: N }, (_, i) => ({
      id: `posted-${i}`,
      type: i % 10 === 0 ? 'CONTENT' : 'FOLDER',
      name: `${nameOf()}-${i}`,
      parent: folders[Math.floor(random() * 3)]!.id,
      owner: ['alice', 'bob', 'admin'][Math.floor(random() * 3)]!,
      minutes: Math.floor(random() * 600),
      text: i % 10 === 0 ? nameOf().replace(/-/g, ' ') || 'nothing' : null,
    }));
    await sql(
      service,
      `insert into resource (id, repository_id, name, mime_type, file_size, md5, storage_path, state, created_at, creator)
       select 'posted-r-' || r.id, ?, r.name, 'text/plain', 1, md5(r.id), 'posted/' || r.id, 'ready', now(), 'admin'
         from jsonb_to_recordset(?::jsonb) r (id text, name text, text text) where r.text is not null`,
      [repository!.id, JSON.stringify(rows)],
    );
    await sql(
      service,
      `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, created_at, last_modified_at, is_latest, parent_id, resource_id)
       select r.id, ?, r.type, r.id, r.name, r.owner, 'admin', 'admin', now() - (r.minutes || ' minutes')::interval, now(), true, r.parent,
              case when r.text is not null then 'posted-r-' || r.id end
         from jsonb_to_recordset(?::jsonb) r (id text, type text, name text, parent text, owner text, minutes int, text text)`,
      [repository!.id, JSON.stringify(rows)],
    );
    await sql(
      service,
      `insert into resource_text (resource_id, repository_id, text) select 'posted-r-' || r.id, ?, r.text from jsonb_to_recordset(?::jsonb) r (id text, text text) where r.text is not null`,
      [repository!.id, JSON.stringify(rows)],
    );
    const [acls] = await sql<{ open: string; alice: string }>(
      service,
      `select (select acl_id from entry where id = ?) as open, (select acl_id from entry where id = ?) as alice`,
      [folders[0]!.id, folders[1]!.id],
    );
    const admin = { principal: { userName: 'admin', roles: ['ADMIN'] }, repository: { id: repository!.id }, em: service.services.orm.em } as unknown as SearchScope;
    // alice reads two of the three folders' ACLs, bob one, and each what it owns under the closed one
    const user = (userName: string, ids: string[]) =>
      ({ principal: { userName, roles: ['USER'], groups: [] }, repository: { id: repository!.id }, em: service.services.orm.em, readable: { ids: ids.map(Number), all: false } }) as unknown as SearchScope;
    const callers = { admin, alice: user('alice', [acls!.open, acls!.alice]), bob: user('bob', [acls!.open]) };
    const pagings = [{}, { limit: 30, offset: 985 }, { limit: 40, orderingDirection: 'desc', entryType: 'FOLDER' }, { limit: 25, offset: 1200, entryType: 'CONTENT' }] as SearchOptions[];
    // arrays bound as one parameter each (the ORM's execute would spread them)
    const client = service.services.orm.em.getConnection().getClient();
    const rowsOf = async <Row>(statement: { sql: string; params: unknown[] }) => (await client.executeQuery<Row>(CompiledQuery.raw(statement.sql, statement.params))).rows;
    const ids = async (statement: { sql: string; params: unknown[] } | undefined) => (statement ? (await rowsOf<{ entry_id: string }>(statement)).map((row) => row.entry_id) : []);
    const pageOf = async (query: ReturnType<typeof buildVisibleWordsQuery>, spread: MatchSpread) => [
      ...(query.offset < relevanceCandidates ? await ids(query.rankedNewest(spread)) : []),
      ...(await ids(query.newestAfterRanked(spread))),
    ];
    const expectSameAnswers = async (step: string) => {
      await expectWordsEqualRows(step);
      for (const [caller, scope] of Object.entries(callers)) {
        for (const [word] of vocabulary) {
          for (const options of pagings) {
            const query = buildVisibleWordsQuery(scope, word, options);
            const [counts] = await rowsOf<WordCounts>(query.wordCount);
            const spread = matchSpread(counts!, Number(counts!.n));
            const what = `${step}: ${caller} '${word}' ${JSON.stringify(options)}`;
            // the count from the count rows and the pending rows, as the matches visited count
            expect(counts!.n, what).toBe((await rowsOf<{ n: string }>(query.count))[0]!.n);
            // today's statement (the matches sorted, or the creation index walked) against the postings (forced: as chosen, it is one of the two)
            const today = await pageOf(query, { ...spread, word: undefined });
            expect(await pageOf(query, { ...spread, matches: Number.MAX_SAFE_INTEGER, visible: Number.MAX_SAFE_INTEGER }), what).toEqual(today);
          }
        }
      }
    };
    // one statement of many entries: a pending row each, rolled up at most once in it
    const pendingRows = async () => Number((await sql<{ n: string }>(service, `select count(*) as n from entry_visible_word_pending where repository_id = ?`, [repository!.id]))[0]!.n);
    expect(await pendingRows()).toBeGreaterThan(0);
    await expectSameAnswers('inserted');
    // which way is chosen, by the counts: the postings for a word in 2 % of a million entries (as
    // administrator, and as a caller who reads half of its matches), neither for a rare word (sorted)
    // nor for one in 40 % (the creation walk)
    const chosen = (n: number, found: number) =>
      buildVisibleWordsQuery(admin, 'ant', {}).rankedNewest(matchSpread({ word: 'ant', n: String(n), found: String(found), summed: '1', kept: '1', pending: '0', visible: '1000000' }, n)).sql;
    expect(chosen(20_000, 20_000)).toContain('entry_visible_posting');
    expect(chosen(10_000, 20_000)).toContain('entry_visible_posting');
    expect(chosen(1_500, 1_500)).not.toContain('entry_visible_posting');
    expect(chosen(400_000, 400_000)).not.toContain('entry_visible_posting');
    // for a caller who may read part, each posting's words row is looked up by its key, in the loop over the postings (never a scan of every words row hashed)
    const forced = buildVisibleWordsQuery(callers.alice, 'ant', {}).rankedNewest({ matches: Number.MAX_SAFE_INTEGER, found: 1, visible: Number.MAX_SAFE_INTEGER, word: 'ant' });
    const plan = (await rowsOf<{ 'QUERY PLAN': string }>({ sql: `explain ${forced.sql}`, params: forced.params })).map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Nested Loop[\s\S]*entry_visible_posting[\s\S]*Index Scan using entry_visible_words_pkey/);
    expect(plan).not.toMatch(/Hash|Seq Scan on entry_visible_words/);

    // renames, texts replaced and gone, deactivated and restored, moved to another ACL, deleted: one statement each, many rows
    const some = (share: number) => rows.filter(() => random() < share).map((row) => row.id);
    await rowsOf({ sql: `update entry set name = case when length(name) % 2 = 0 then 'cat-' || name else replace(name, 'ant', 'dog') end where id = any($1::text[])`, params: [some(0.2)] });
    await expectSameAnswers('renamed');
    await rowsOf({ sql: `update resource_text set text = 'eel bee ' || text where resource_id = any(array(select 'posted-r-' || x from unnest($1::text[]) x))`, params: [some(0.5)] });
    await rowsOf({ sql: `delete from resource_text where resource_id = any(array(select 'posted-r-' || x from unnest($1::text[]) x))`, params: [some(0.2)] });
    await expectSameAnswers('texts replaced and gone');
    const inactive = some(0.1);
    await rowsOf({ sql: `update entry set active = false where id = any($1::text[])`, params: [inactive] });
    await expectSameAnswers('deactivated');
    await rowsOf({ sql: `update entry set active = true where id = any($1::text[])`, params: [inactive.slice(0, inactive.length / 2)] });
    await rowsOf({ sql: `update entry set parent_id = $1 where id = any($2::text[])`, params: [folders[2]!.id, some(0.2)] });
    await ok('PUT', `/folder/${folders[0]!.id}/acl`, { inherit: false, entries: [{ principal: 'admin', permission: 'write' }] });
    await expectSameAnswers('restored, moved and an ACL changed');
    await rowsOf({ sql: `delete from entry where id = any($1::text[])`, params: [some(0.3)] });
    await expectSameAnswers('deleted');
    // the pending rows rolled up (none left), new ones after them, then every word folded
    await sql(service, `select entry_visible_word_count_roll_up(?)`, [repository!.id]);
    expect(await pendingRows()).toBe(0);
    await expectSameAnswers('rolled up');
    await rowsOf({ sql: `update entry set name = 'eel-' || name where id = any($1::text[])`, params: [some(0.2)] });
    expect(await pendingRows()).toBeGreaterThan(0);
    await expectSameAnswers('pending rows after a roll-up');
    await sql(service, `select entry_visible_word_count_roll_up(?, true)`, [repository!.id]);
    expect(await pendingRows()).toBe(0);
    await expectSameAnswers('rolled up, its words folded');
    await sql(service, `select entry_visible_word_count_fold(?, array['ant', 'bee', 'cat', 'dog', 'eel'])`, [repository!.id]);
    const [folded] = await rowsOf<{ rows: string; keys: string }>({
      sql: `select count(*) as rows, count(distinct (word, entry_type, acl_id)) as keys from entry_visible_word_count where repository_id = $1 and word = any($2::text[])`,
      params: [repository!.id, vocabulary.map(([word]) => word)],
    });
    expect(folded!.rows).toBe(folded!.keys);
    await expectSameAnswers('folded');

    await sql(service, `delete from entry where id like 'posted-%'`);
    await sql(service, `delete from resource where id like 'posted-r-%'`);
    for (const folder of folders) await ok('DELETE', `/folder/${folder.id}`, undefined, { recursive: 'true' });
  }, 120_000);
});
