import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { createContent } from '../entries/contents.js';
import type { EntryScope } from '../entries/scope.js';
import { submitLostThumbnails } from './thumbnails.js';

// The previews' sweep (docs/conversion.md, *Previews*): a version whose thumbnail request was lost
// (its process died between the commit and the request) gets its job from the workers' sweep.
let bench: OperationsBench;
let scope: EntryScope;

beforeAll(async () => {
  bench = await createOperationsBench();
  scope = await bench.scopeOf('admin', ['ADMIN']);
});
afterAll(() => bench?.stop());

const sql = <T = Record<string, unknown>>(statement: string, parameters: unknown[] = []) => bench.services.orm.em.fork().getConnection().execute<T[]>(statement, parameters);
const thumbnailJobsOf = (contentId: string) =>
  sql<{ resource_id: string; owner: string }>(`select serialized_request ->> 'resourceId' as resource_id, owner from service_job where job_name = 'thumbnail' and content_ids = array[?]::text[]`, [contentId]);

async function upload(name: string, mimeType: string) {
  const content = await createContent(scope, { uploadId: await bench.stage(scope, '%PDF-1.4 not drawn here', name), name, mimeType });
  // the request goes out after the commit, without being waited for
  const until = Date.now() + 10_000;
  while (mimeType === 'application/pdf' && (await thumbnailJobsOf(content.id)).length === 0) {
    if (Date.now() > until) throw new Error(`no thumbnail job for ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return content;
}

describe('submitLostThumbnails', () => {
  it('submits the job of a current PDF or image version that has neither a thumbnail nor a job, once', async () => {
    const requested = await upload('requested.pdf', 'application/pdf');
    const lost = await upload('lost.pdf', 'application/pdf');
    await upload('notes.txt', 'text/plain');
    // as if its process had died before the request: no job was ever recorded
    await sql(`delete from service_job where job_name = 'thumbnail' and content_ids = array[?]::text[]`, [lost.id]);

    // a version younger than lostAfterMs may still have its request on the way
    expect(await submitLostThumbnails(bench.services, { withinMs: 3_600_000, lostAfterMs: 3_600_000 })).toBe(0);
    expect(await submitLostThumbnails(bench.services, { withinMs: 3_600_000, lostAfterMs: 0 })).toBe(1);
    expect(await thumbnailJobsOf(lost.id)).toEqual([{ resource_id: lost.resourceId, owner: 'admin' }]);
    expect(await thumbnailJobsOf(requested.id)).toHaveLength(1);
    // its job is there now: the next sweep submits nothing
    expect(await submitLostThumbnails(bench.services, { withinMs: 3_600_000, lostAfterMs: 0 })).toBe(0);
  });

  it('leaves out a version with a thumbnail, a deleted content, and versions older than the window', async () => {
    const made = await upload('made.pdf', 'application/pdf');
    const gone = await upload('gone.pdf', 'application/pdf');
    await sql(`delete from service_job where job_name = 'thumbnail' and content_ids && array[?, ?]::text[]`, [made.id, gone.id]);
    // a thumbnail stored (its job since removed by retention, say)
    await sql(
      `insert into representation (id, repository_id, source_entry_id, format, page, page_count, status, mime_type, file_size, width, height, storage_path)
       values (gen_random_uuid()::text, ?, ?, 'thumbnail', 1, 1, 'READY', 'image/png', 1, 1, 1, 'made-thumbnail.png')`,
      [scope.repository.id, made.id],
    );
    await sql(`update entry set active = false where id = ?`, [gone.id]);
    expect(await submitLostThumbnails(bench.services, { withinMs: 3_600_000, lostAfterMs: 0 })).toBe(0);
    // an hour later nothing of this hour is looked at
    await sql(`update entry set active = true where id = ?`, [gone.id]);
    await sql(`update resource set created_at = now() - interval '2 hours' where id = ?`, [gone.resourceId]);
    expect(await submitLostThumbnails(bench.services, { withinMs: 3_600_000, lostAfterMs: 0 })).toBe(0);
  });
});
