import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, finishedJob } from '../../../test/helpers/conversion.js';
import { cachedFiles, contentUrl, fileForm, newContent, newFolder, sql } from '../../../test/helpers/entries.js';
import { buildPdf, objectsPage, textPdf } from '../../../test/helpers/pdf.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// Previews (DESIGN §12, issue 29 item 3): a first-page thumbnail of every new PDF or image version,
// made in the background (the test service turns previews off for the other tests).
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ PREVIEWS_ENABLED: 'true', CONV_PDF_DPI: '72', CONV_MAX_IMAGE_PIXELS: '4000000' });
});
afterAll(() => service?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const thumbnail = (contentId: string, session = service.adminSession, headers: Record<string, string> = {}, query: Record<string, string> = {}) =>
  call(contentUrl(service, `/content/${contentId}/thumbnail`, query, session), { headers });

/** The thumbnail job of a content, once ended. */
async function thumbnailJob(contentId: string): Promise<Record<string, any>> {
  const until = Date.now() + 60_000;
  for (;;) {
    const [job] = await sql(service, `select state, reason_code, error_message, priority from service_job where job_name = 'thumbnail' and ? = any(content_ids) order by created_at desc limit 1`, [
      contentId,
    ]);
    if (job && ['Done', 'panic'].includes(job.state as string)) return job;
    if (Date.now() > until) throw new Error(`thumbnail of ${contentId} still ${job?.state ?? 'unrecorded'}`);
    await sleep(50);
  }
}

/** The thumbnail's bytes, once made: a PNG of at most 256 px a side. */
async function thumbnailImage(contentId: string) {
  await thumbnailJob(contentId);
  const response = await fetch(contentUrl(service, `/content/${contentId}/thumbnail`));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('image/png');
  const metadata = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
  expect(metadata.format).toBe('png');
  expect(Math.max(metadata.width!, metadata.height!)).toBeLessThanOrEqual(256);
  return { metadata, etag: response.headers.get('etag')! };
}

const thumbnailUrlOf = async (contentId: string) =>
  (await service.graphql<any>(`query($id: ID!) { content(repository: "default", id: $id) { thumbnailUrl } }`, { id: contentId })).data?.content?.thumbnailUrl;

describe('GET C/content/{id}/thumbnail', () => {
  it('serves the first page of a new PDF, 256 px on its long side, with an ETag (If-None-Match: 304); Content.thumbnailUrl names it', async () => {
    const content = await newContent(service, { name: 'letter.pdf', bytes: textPdf(3) });
    const { metadata, etag } = await thumbnailImage(content.id);
    // a Letter page (612 × 792 pt) fitted into 256 px
    expect([metadata.width, metadata.height]).toEqual([197, 256]);
    expect(etag).toMatch(/^".+"$/);
    const again = await thumbnail(content.id, service.adminSession, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect((await thumbnail(content.id, service.adminSession, { 'if-none-match': '"other"' })).status).toBe(200);
    const url = await thumbnailUrlOf(content.id);
    expect(url).toMatch(new RegExp(`^/api/v1/[^/]+/v1/content/${content.id}/thumbnail$`));
    expect((await fetch(`${service.baseUrl}${url}`, { headers: { authorization: `Bearer ${service.adminSession}` } })).status).toBe(200);
    expect((await thumbnailJob(content.id)).priority).toBe(-20);
    // its changes of state are events of the content (a client watching the folder learns it is there), made by the service
    const events = await sql(service, `select actor, details from event where type = 'JOB_STATE_CHANGED' and entry_id = ? order by id`, [content.id]);
    expect(events.map((event) => [event.actor, (event.details as { jobName: string }).jobName, (event.details as { state: string }).state])).toEqual([
      [null, 'thumbnail', 'pending'],
      [null, 'thumbnail', 'running'],
      [null, 'thumbnail', 'Done'],
    ]);
  });

  it('serves an image scaled down (a small image is not enlarged), and a copy its own', async () => {
    const wide = await newContent(service, { name: 'wide.png', bytes: await sharp({ create: { width: 1200, height: 600, channels: 3, background: '#cc3366' } }).png().toBuffer(), mimeType: 'image/png' });
    expect((await thumbnailImage(wide.id)).metadata).toMatchObject({ width: 256, height: 128 });
    const small = await newContent(service, { name: 'small.jpg', bytes: await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } }).jpeg().toBuffer(), mimeType: 'image/jpeg' });
    expect((await thumbnailImage(small.id)).metadata).toMatchObject({ width: 40, height: 30 });
    // a copy is a new content: a thumbnail of its own
    const folder = await newFolder(service, 'copies');
    const copy = await call(contentUrl(service, `/content/${wide.id}/copy`), json('POST', { parentId: folder.id }));
    expect(copy.status, JSON.stringify(copy.body)).toBe(201);
    expect((await thumbnailImage(copy.body.id)).metadata).toMatchObject({ width: 256, height: 128 });
  });

  it('Content.thumbnailUrl in a listing: each content its own, null for those without, from one query for the page', async () => {
    const folder = await newFolder(service, 'listed');
    const pdfs = [await newContent(service, { name: 'one.pdf', parentId: folder.id, bytes: textPdf(1) }), await newContent(service, { name: 'two.pdf', parentId: folder.id, bytes: textPdf(2) })];
    const text = await newContent(service, { name: 'three.txt', parentId: folder.id, bytes: 'plain', mimeType: 'text/plain' });
    for (const pdf of pdfs) await thumbnailImage(pdf.id);
    const listed = await service.graphql<any>(
      `query($id: ID!) { folder(repository: "default", id: $id) { children { entries { ... on Content { id thumbnailUrl } } } } }`,
      { id: folder.id },
    );
    const urls = Object.fromEntries(listed.data.folder.children.entries.map((entry: { id: string; thumbnailUrl: string | null }) => [entry.id, entry.thumbnailUrl]));
    for (const pdf of pdfs) expect(urls[pdf.id]).toMatch(new RegExp(`/content/${pdf.id}/thumbnail$`));
    expect(urls[text.id]).toBeNull();
  });

  it('is a 404 for kinds without one (no job is made) and until it is made', async () => {
    const text = await newContent(service, { name: 'notes.txt', bytes: 'plain text', mimeType: 'text/plain' });
    const answer = await thumbnail(text.id);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ reasonCode: 'notFound', message: expect.stringContaining('has no thumbnail') });
    expect(await thumbnailUrlOf(text.id)).toBeNull();
    await sleep(300);
    expect(await sql(service, `select id from service_job where job_name = 'thumbnail' and ? = any(content_ids)`, [text.id])).toEqual([]);
    // not made yet: a content whose bytes a job has not rendered (its thumbnail row taken away)
    const pdf = await newContent(service, { name: 'later.pdf', bytes: textPdf(1) });
    await thumbnailJob(pdf.id);
    await sql(service, `delete from representation where source_entry_id = ? and format = 'thumbnail'`, [pdf.id]);
    expect((await thumbnail(pdf.id)).status).toBe(404);
    expect(await thumbnailUrlOf(pdf.id)).toBeNull();
    expect((await thumbnail('no-such-content')).status).toBe(404);
  });

  it('follows the rules of the content download: a 404 for a caller the ACL leaves out; a deactivated content is a 404 but to its owner and administrators asking with includeInactive', async () => {
    const owner = await service.createUserSession('tina');
    const other = await service.createUserSession('theo');
    const content = await newContent(service, { name: 'private.pdf', bytes: textPdf(1), session: owner });
    await thumbnailImage(content.id);
    expect((await thumbnail(content.id, other)).status).toBe(200);
    // an ACL that leaves the other user out: the thumbnail is not there for him, as the content is not
    const narrowed = await call(contentUrl(service, `/content/${content.id}/acl`, {}, owner), json('PUT', { inherit: false, entries: [] }));
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    expect((await call(contentUrl(service, `/content/${content.id}/download`, {}, other))).status).toBe(404);
    expect((await thumbnail(content.id, other)).status).toBe(404);
    expect((await thumbnail(content.id, owner)).status).toBe(200);
    expect((await call(contentUrl(service, `/content/${content.id}/acl`, {}, owner), json('PUT', { inherit: true, entries: [] }))).status).toBe(200);
    expect((await thumbnail(content.id, other)).status).toBe(200);
    expect((await call(contentUrl(service, `/content/${content.id}`, {}, owner), { method: 'DELETE' })).status).toBe(204);
    expect((await thumbnail(content.id, other)).status).toBe(404);
    expect((await thumbnail(content.id, other, {}, { includeInactive: 'true' })).status).toBe(404);
    expect((await thumbnail(content.id, owner)).status).toBe(404);
    expect((await thumbnail(content.id, owner, {}, { includeInactive: 'true' })).status).toBe(200);
  });

  it('a broken or encrypted PDF, or one whose first page cannot be drawn: the job ends in panic with a reason, no thumbnail, nothing left pending', async () => {
    const broken = await newContent(service, { name: 'broken.pdf', bytes: textPdf(2).subarray(0, 200) });
    const locked = await newContent(service, { name: 'locked.pdf', bytes: buildPdf([objectsPage(3)], { encrypted: true }) });
    // its first page holds an image over CONV_MAX_IMAGE_PIXELS (4,000,000 here): a conversion would make it a placeholder page
    const big = { width: 2100, height: 2000, rgb: Buffer.alloc(2100 * 2000 * 3, 0x20) };
    const undrawable = await newContent(service, { name: 'undrawable.pdf', bytes: buildPdf([{ content: 'q 500 0 0 500 50 50 cm /Im1 Do Q', image: big }, objectsPage(3)]) });
    for (const [content, message] of [
      [broken, /^input resource broken\.pdf is not a readable PDF/],
      [locked, /^input resource locked\.pdf is encrypted and cannot be opened without its password$/],
      [undrawable, /^the first page of undrawable\.pdf could not be rendered$/],
    ] as const) {
      const job = await thumbnailJob(content.id);
      expect(job).toMatchObject({ state: 'panic', reason_code: 'illegalArguments' });
      expect(job.error_message).toMatch(message);
      expect((await thumbnail(content.id)).status).toBe(404);
    }
    expect(await sql(service, `select id from service_job where job_name = 'thumbnail' and state in ('pending', 'running') and content_ids && array[?, ?, ?]::text[]`, [broken.id, locked.id, undrawable.id])).toEqual([]);
  });
});

describe('new versions and removal', () => {
  it('a check-in (with new bytes or without) and a replaced resource get thumbnails of their own; the thumbnail goes with the content (purge) and is counted in the cache statistics', { timeout: 90_000 }, async () => {
    const content = await newContent(service, { name: 'versions.pdf', bytes: textPdf(1) });
    const first = await thumbnailImage(content.id);
    const statistics = async () => (await call(`${service.adminBase}/repository/statistics?${new URLSearchParams({ repositoryId: 'svc.repository.default', sessionId: service.adminSession })}`)).body.cacheStatistics;
    const counted = (await statistics()).numberOfRepresentations;
    expect(counted).toBeGreaterThanOrEqual(1);

    expect((await call(contentUrl(service, `/content/${content.id}/check-out`), { method: 'POST' })).status).toBe(200);
    // a landscape page: the new thumbnail is another image
    const landscape = buildPdf([{ width: 792, height: 612, ...objectsPage(5) }]);
    const checkedIn = await call(contentUrl(service, `/content/${content.id}/check-in`), { method: 'POST', body: fileForm(landscape, 'versions.pdf') });
    expect(checkedIn.status).toBe(200);
    // the new version (the working copy's id): a thumbnail of its own bytes; the older version keeps its own
    const second = await thumbnailImage(checkedIn.body.id);
    expect(second.etag).not.toBe(first.etag);
    expect(second.metadata).toMatchObject({ width: 256, height: 197 });
    expect((await thumbnailImage(content.id)).etag).toBe(first.etag);

    const replaced = await call(contentUrl(service, `/content/${checkedIn.body.id}/resource`), { method: 'PUT', body: fileForm(textPdf(1), 'versions.pdf') });
    expect(replaced.status).toBe(200);
    expect((await thumbnailImage(replaced.body.id)).metadata).toMatchObject({ width: 197, height: 256 });
    // a check-in without new bytes: the new version (the working copy) gets its own too
    expect((await call(contentUrl(service, `/content/${replaced.body.id}/check-out`), { method: 'POST' })).status).toBe(200);
    const unchanged = await call(contentUrl(service, `/content/${replaced.body.id}/check-in`), { method: 'POST' });
    expect(unchanged.status).toBe(200);
    expect((await thumbnailImage(unchanged.body.id)).metadata).toMatchObject({ width: 197, height: 256 });
    expect((await statistics()).numberOfRepresentations).toBe(counted + 3);

    const versions = [content.id, checkedIn.body.id, replaced.body.id, unchanged.body.id];
    const files = (await sql<{ storage_path: string }>(service, `select storage_path from representation where format = 'thumbnail' and source_entry_id in (?, ?, ?, ?)`, versions)).map(
      (row) => row.storage_path,
    );
    expect(files).toHaveLength(4);
    expect((await call(contentUrl(service, `/content/${unchanged.body.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    expect(await sql(service, `select id from representation where source_entry_id in (?, ?, ?, ?)`, versions)).toEqual([]);
    const left = await cachedFiles(service);
    for (const file of files) expect(left.some((path) => file.endsWith(path))).toBe(false);
    expect((await statistics()).numberOfRepresentations).toBe(counted - 1);
  });
});

describe('a burst of uploads', () => {
  // a second service, 31 uploads and their queued previews: 9–30 s under load (reached vitest's 30 s twice
  // at load 13–17); what it asserts is the order of starts, not the time
  it('does not hold conversions back: thumbnails run in a slot of their own, a conversion submitted after 30 queued previews starts before most of them', async () => {
    const burst = await startTestService({ PREVIEWS_ENABLED: 'true', JOB_CONCURRENCY: '1', CONV_PDF_DPI: '72' });
    try {
      // a first page of 10,000 rectangles: about a second to render, so that previews queue up
      const busy = buildPdf([objectsPage(10_000)]);
      for (let i = 0; i < 30; i++) await newContent(burst, { name: `burst-${i}.pdf`, bytes: busy });
      // declared as octet-stream: no preview is asked for the conversion's input (the converter still reads it as a PDF)
      const input = await newContent(burst, { name: 'convert-me.pdf', bytes: textPdf(1), mimeType: 'application/octet-stream' });
      const started = await convert(burst, { contentId: input.id });
      const job = await finishedJob(burst, started.body.jobId);
      expect(job.state).toBe('Done');
      const [conversion] = await sql<{ start_timestamp: Date }>(burst, `select start_timestamp from service_job where id = ?`, [started.body.jobId]);
      const previews = await sql<{ state: string; start_timestamp: Date | null }>(burst, `select state, start_timestamp from service_job where job_name = 'thumbnail'`);
      expect(previews).toHaveLength(30);
      // previews that had not started when the conversion started: it did not wait for the queue of previews
      const after = previews.filter((preview) => preview.start_timestamp === null || preview.start_timestamp > conversion!.start_timestamp);
      expect(after.length).toBeGreaterThan(10);
    } finally {
      await burst.stop();
    }
  }, 120_000);
});
