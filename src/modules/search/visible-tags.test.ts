import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeVisibility, defaultVisibility, newContent, newFolder, sql, succeeded } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';

/*
 * The tags of visible entries (Migration20261123040001EntryVisibleTags), which answer the count of a
 * tag-only search, and their tag sets per ACL (Migration20261207170000EntryVisibleTagSets) equal the
 * entry rows after every verb; and those counts are read from them.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const ok = (method: string, path: string, body?: Record<string, unknown>, query: Record<string, string | string[]> = {}) => succeeded(service, method, path, body, query);

async function expectTagsEqualRows(step: string): Promise<void> {
  const kept = await sql<{ pair: string }>(service, `select repository_id || '|' || tag || '|' || entry_id || '|' || entry_type as pair from entry_visible_tag order by 1`);
  const rows = await sql<{ pair: string }>(
    service,
    `select distinct repository_id || '|' || t || '|' || id || '|' || entry_type as pair from entry, unnest(tags) t where ${defaultVisibility} order by 1`,
  );
  expect(kept.map((r) => r.pair), step).toEqual(rows.map((r) => r.pair));
  // and the tag sets counted per ACL (Migration20261207170000EntryVisibleTagSets), which answer a user's count
  const sets = await sql<{ set: string }>(
    service,
    `select repository_id || '|' || acl_id || '|' || entry_type || '|' || tags::text || '|' || sum(n) as set from entry_visible_tag_set
      group by repository_id, acl_id, entry_type, tags having sum(n) <> 0 order by 1`,
  );
  const recounted = await sql<{ set: string }>(
    service,
    `select repository_id || '|' || acl_id || '|' || entry_type || '|' || tags::text || '|' || count(*) as set from entry
      where ${defaultVisibility} and cardinality(tags) > 0 group by repository_id, acl_id, entry_type, tags order by 1`,
  );
  expect(sets.map((r) => r.set), step).toEqual(recounted.map((r) => r.set));
}

/** The count a search answers with a page of one (so that it is counted, not told by a short page). */
const countOf = async (path: string, query: Record<string, string>) => (await ok('GET', path, undefined, { ...query, limit: '1' })).count as number;
/** Every match, counted from the pages themselves. */
const matchesOf = async (path: string, query: Record<string, string>) => (await ok('GET', path, undefined, { ...query, limit: '1000' })).entries.length as number;

describe('the tags of visible entries', () => {
  it('equal the rows after create, tagging, versioning, copy, delete, restore and folder deletion', async () => {
    const folder = await newFolder(service, 'tagged');
    const a = await newContent(service, { name: 'a.txt', parentId: folder.id, tags: ['red', 'blue'] });
    await newContent(service, { name: 'b.txt', parentId: folder.id, tags: ['red', 'red'] });
    await expectTagsEqualRows('create (a repeated tag is one row)');
    await ok('POST', `/content/${a.id}/tags`, undefined, { tags: 'green' });
    await ok('DELETE', `/content/${a.id}/tags`, undefined, { tags: 'blue' });
    await expectTagsEqualRows('add and remove tags');
    await changeVisibility(service, a.id, expectTagsEqualRows);
    await ok('DELETE', `/folder/${folder.id}`, undefined, { recursive: 'true' });
    await expectTagsEqualRows('recursive folder deletion');
  });

  it('answer the exact count of tag-only searches, which are read from them', async () => {
    await Promise.all([
      newContent(service, { name: 'c1.txt', tags: ['cyan'] }),
      newContent(service, { name: 'c2.txt', tags: ['cyan', 'magenta'] }),
      newContent(service, { name: 'c3.txt', tags: ['magenta'] }),
      newContent(service, { name: 'c4.txt', tags: ['yellow', 'cyan'] }),
      newContent(service, { name: 'c5.txt', tags: ['black'] }),
    ]);
    const searches: [string, Record<string, string>, number][] = [
      ['/content/search/by-condition', { condition: "'cyan' in tags or 'magenta' in tags" }, 4],
      ['/content/search/by-condition', { condition: "'cyan' in tags and 'magenta' in tags" }, 1],
      ['/content/search/by-condition', { condition: "tags in ('yellow', 'black') or ('cyan' in tags and 'magenta' in tags)" }, 3],
      ['/content/search/by-condition', { condition: "'cyan' in tags", entryType: 'FOLDER' }, 0],
      // an \`or\` of tags alone: counted as a union of the tags' index ranges
      ['/content/search/by-condition', { condition: "tags in ('cyan', 'yellow') or 'black' in tags" }, 4],
      ['/content/search/by-condition', { condition: "'magenta' in tags or 'cyan' in tags", entryType: 'CONTENT' }, 4],
      ['/content/search', { tags: 'cyan' }, 3],
    ];
    for (const [path, query, expected] of searches) {
      expect(await matchesOf(path, query), JSON.stringify(query)).toBe(expected);
      if (expected > 1) expect(await countOf(path, query), JSON.stringify(query)).toBe(expected);
    }
    // the count comes from entry_visible_tag: a row taken out of it (never done by the service) shows
    await sql(service, `delete from entry_visible_tag where tag = 'magenta' and entry_id = (select id from entry where name = 'c3.txt')`);
    expect(await countOf('/content/search/by-condition', { condition: "'cyan' in tags or 'magenta' in tags" })).toBe(3);
    // a condition that is not tag-only is counted in the entry table
    expect(await countOf('/content/search/by-condition', { condition: "'magenta' in tags and name like 'c*'" })).toBe(2);
  });
});
