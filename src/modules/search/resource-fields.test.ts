import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, fileForm, newContent, sql, succeeded } from '../../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

/*
 * The entry row's copy of its resource's file size and media type (Migration20261122270000EntryResourceFields),
 * which searches order and filter by, stays equal to the resource after every verb that sets a resource.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const verb = (method: string, path: string, body?: FormData | Record<string, unknown>) => succeeded(service, method, path, body);

/** Entries whose copy differs from their resource, and how many entries have a resource. */
async function copies(): Promise<{ differing: unknown[]; withResource: number }> {
  const differing = await sql(
    service,
    `select e.id, e.resource_file_size, e.resource_mime_type, r.file_size, r.mime_type from entry e left join resource r on r.id = e.resource_id
     where e.resource_file_size is distinct from r.file_size or e.resource_mime_type is distinct from r.mime_type`,
  );
  const [row] = await sql<{ n: string }>(service, `select count(*) as n from entry where resource_id is not null`);
  return { differing, withResource: Number(row!.n) };
}

const sizeOrder = async (direction = 'asc') =>
  (await call(contentUrl(service, '/content/search', { entryType: 'CONTENT', orderBy: 'resource.fileSize', orderingDirection: direction }))).body.entries.map(
    (e: { name: string }) => e.name,
  );

describe("an entry's copy of its resource's size and media type", () => {
  it('equals the resource after create, replace, check-out, check-in, cancel, copy, delete and restore', async () => {
    const content = await newContent(service, { name: 'grows.txt', bytes: 'a' });
    const check = async (step: string, entries: number) => {
      const { differing, withResource } = await copies();
      expect(differing, step).toEqual([]);
      expect(withResource, step).toBe(entries);
    };
    await check('create', 1);
    await verb('PUT', `/content/${content.id}/resource`, fileForm('abc', 'grows.md'));
    await check('replace (a version 1.1 beside 1.0)', 2);
    const workingCopy = await verb('POST', `/content/${content.id}/check-out`);
    await check('check-out', 3);
    await verb('POST', `/content/${workingCopy.id}/cancel-check-out`);
    await check('cancel check-out', 2);
    const again = await verb('POST', `/content/${content.id}/check-out`);
    await verb('POST', `/content/${again.id}/check-in`, fileForm('a longer text', 'grows.html'));
    await check('check-in with new bytes', 3);
    await verb('POST', `/content/${content.id}/copy`, { name: 'grows copy.html' });
    await check('copy', 4);
    await verb('DELETE', `/content/${content.id}`);
    await verb('POST', `/content/${content.id}/restore`);
    await check('delete and restore', 4);
    const [latest] = await sql<{ resource_file_size: string; resource_mime_type: string }>(
      service,
      `select resource_file_size, resource_mime_type from entry where chronical_id = ? and is_latest`,
      [content.chronicalId],
    );
    expect(latest).toEqual({ resource_file_size: '13', resource_mime_type: 'text/html' });
  });

  it('follows a change of the resource itself, and a folder has none', async () => {
    const content = await newContent(service, { name: 'changed.txt', bytes: 'xy' });
    await sql(service, `update resource set file_size = 99, mime_type = 'application/x-changed' where id = (select resource_id from entry where id = ?)`, [content.id]);
    expect((await copies()).differing).toEqual([]);
    expect((await call(contentUrl(service, '/content/search/by-condition', { condition: "mimeType = 'application/x-changed' and fileSize = 99" }))).body.count).toBe(1);
    // a statement writing the copy directly cannot make it differ
    await sql(service, `update entry set resource_file_size = 1 where id = ?`, [content.id]);
    expect((await copies()).differing).toEqual([]);
    await verb('POST', '/folder', { name: 'holder' });
    expect((await copies()).differing).toEqual([]);
  });

  it('orders by resource.fileSize from the copy, missing sizes last in both directions', async () => {
    const asc = await sizeOrder('asc');
    const desc = await sizeOrder('desc');
    expect(asc.length).toBeGreaterThan(1);
    expect(desc).toEqual([...asc].reverse());
  });
});
