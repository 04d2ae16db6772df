import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeVisibility, contentUrl, defaultVisibility, newContent, newFolder, sql, succeeded } from '../../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

/*
 * The per-repository totals of visible entries (Migration20261122270001EntryVisibleCounts), which answer
 * the count of an unfiltered search, equal a count of the rows after every verb, concurrent ones too.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const ok = (method: string, path: string, body?: Record<string, unknown>, query: Record<string, string> = {}) => succeeded(service, method, path, body, query);

/** Per entry type: the maintained total and a count of the rows it stands for. */
async function totalsAndRows(): Promise<{ totals: Record<string, number>; rows: Record<string, number> }> {
  const totals = await sql<{ entry_type: string; n: string }>(service, `select entry_type, sum(n) as n from entry_visible_count group by entry_type`);
  const rows = await sql<{ entry_type: string; n: string }>(
    service,
    `select entry_type, count(*) as n from entry where ${defaultVisibility} group by entry_type`,
  );
  const byType = (list: { entry_type: string; n: string }[]) => Object.fromEntries(list.filter((r) => Number(r.n) !== 0).map((r) => [r.entry_type, Number(r.n)]));
  return { totals: byType(totals), rows: byType(rows) };
}

async function expectTotalsEqualRows(step: string): Promise<void> {
  const { totals, rows } = await totalsAndRows();
  expect(totals, step).toEqual(rows);
  // the unfiltered search's count (answered from the totals once a page is full) agrees
  const all = await call(contentUrl(service, '/content/search', { limit: 1 }));
  expect(all.body.count, step).toBe((rows.CONTENT ?? 0) + (rows.FOLDER ?? 0));
  const contents = await call(contentUrl(service, '/content/search', { limit: 1, entryType: 'CONTENT' }));
  expect(contents.body.count, step).toBe(rows.CONTENT ?? 0);
}

describe('the maintained totals of visible entries', () => {
  it('equal the rows after create, versioning, copy, delete, restore and folder deletion', async () => {
    const folder = await newFolder(service, 'counted');
    const inner = await newFolder(service, 'inner', folder.id);
    const a = await newContent(service, { name: 'a.txt', parentId: folder.id });
    await newContent(service, { name: 'b.txt', parentId: inner.id });
    await expectTotalsEqualRows('create');
    await changeVisibility(service, a.id, expectTotalsEqualRows);
    await ok('DELETE', `/folder/${folder.id}`, undefined, { recursive: 'true' });
    await expectTotalsEqualRows('recursive folder deletion');
  });

  it('stay equal under concurrent uploads, and folding keeps the sum', async () => {
    await Promise.all(Array.from({ length: 24 }, (_, i) => newContent(service, { name: `parallel-${i}.txt` })));
    await expectTotalsEqualRows('24 concurrent uploads');
    const [repository] = await sql<{ repository_id: string }>(service, `select repository_id from entry_visible_count limit 1`);
    await sql(service, `select entry_visible_count_fold(?)`, [repository!.repository_id]);
    const [rows] = await sql<{ n: string }>(service, `select count(*) as n from entry_visible_count where repository_id = ?`, [repository!.repository_id]);
    expect(Number(rows!.n)).toBeLessThanOrEqual(2);
    await expectTotalsEqualRows('after a fold');
  });
});
