/**
 * The service with its bytes in S3 (DESIGN §14), against a real S3 peer (test/helpers/s3.ts): REST
 * uploads, ranged and conditional downloads, conversion, copy, text extraction, delete and purge,
 * the connection check and the sweep of unreferenced files — checked against the buckets' contents,
 * with nothing written to the data folder's storage.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepUnreferencedFiles } from '../../src/modules/entries/index.js';
import { convertBytes, finishedJob } from '../helpers/conversion.js';
import { cachedFiles, contentUrl, extracted, newContent, sql, storedFiles, uploadContent } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { call, json, startTestService, type TestService } from '../helpers/service.js';

let s3: TestS3;
let service: TestService;
beforeAll(async () => {
  s3 = await startTestS3();
  service = await startTestService({ ...s3.env, MAX_UPLOAD_BYTES: String(20 * 1024 * 1024) });
});
afterAll(async () => {
  await service?.stop();
  await s3?.stop();
});

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const download = (id: string, headers: Record<string, string> = {}) => fetch(contentUrl(service, `/content/${id}/download`), { headers });
const contentKeys = () => s3.keys(s3.bucket);
const cacheKeys = () => s3.keys(s3.cacheBucket);

describe('contents in S3', () => {
  it('an upload (multipart: over one part) lands in the content bucket under its id, and nothing in the data folder', async () => {
    const data = randomBytes(9 * 1024 * 1024 + 3);
    const content = await newContent(service, { name: 'large.bin', bytes: data });
    expect(content.resource).toMatchObject({ fileSize: data.length, md5: md5(data) });
    const storagePath = content.resource.resourceSource.path as string;
    expect(storagePath).toMatch(new RegExp(`/${content.resource.id}$`));
    expect(await contentKeys()).toContain(storagePath);
    expect(await storedFiles(service)).toEqual([]);

    const whole = await download(content.id);
    expect(whole.status).toBe(200);
    expect(md5(Buffer.from(await whole.arrayBuffer()))).toBe(md5(data));
  });

  it('downloads ranges and answers conditional requests', async () => {
    const data = Buffer.from('0123456789'.repeat(1000));
    const content = await newContent(service, { name: 'digits.txt', bytes: data });
    const etag = `"${md5(data)}"`;
    const ranged = await download(content.id, { range: 'bytes=10-19' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 10-19/${data.length}`);
    expect(await ranged.text()).toBe('0123456789');
    const suffix = await download(content.id, { range: 'bytes=-5' });
    expect(await suffix.text()).toBe('56789');
    expect((await download(content.id, { range: `bytes=${data.length}-` })).status).toBe(416);
    const notModified = await download(content.id, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await download(content.id, { 'if-match': '"other"' })).status).toBe(412);
    const head = await fetch(contentUrl(service, `/content/${content.id}/download`), { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(data.length));
  });

  it('an upload over MAX_UPLOAD_BYTES is a 413 and leaves nothing in the bucket', async () => {
    const before = await contentKeys();
    // within the multipart envelope's allowance: refused while streaming, after parts went up
    const response = await uploadContent(service, { name: 'too-large.bin', bytes: randomBytes(20 * 1024 * 1024 + 10_000) });
    expect(response.status).toBe(413);
    expect(await contentKeys()).toEqual(before);
  });

  it('copies a content server-side, extracts its text and finds it, then purges it: the bucket loses its bytes', async () => {
    const content = await newContent(service, { name: 'words.txt', bytes: 'zebras graze near the quarry' });
    const copied = await call(contentUrl(service, `/content/${content.id}/copy`), json('POST', { name: 'words copy.txt' }));
    expect(copied.status).toBe(201);
    expect(await contentKeys()).toContain(copied.body.resource.resourceSource.path);
    expect(await (await download(copied.body.id)).text()).toBe('zebras graze near the quarry');

    await extracted(service, content.id);
    const [row] = await sql<{ text: string }>(service, 'select text from resource_text where resource_id = ?', [content.resource.id]);
    expect(row?.text).toContain('zebras');

    const path = content.resource.resourceSource.path as string;
    expect(await contentKeys()).toContain(path);
    const purged = await call(contentUrl(service, `/content/${content.id}`, { permanent: 'true' }), { method: 'DELETE' });
    expect(purged.status).toBe(204);
    expect(await contentKeys()).not.toContain(path);
  });

  it('the sweep removes objects no row names, and keeps the others', async () => {
    const kept = await newContent(service, { name: 'kept.txt' });
    const orphan = service.services.contentStore.pathFor('purged-resource-left-behind');
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: orphan, Body: 'orphan' }));
    const removed = await sweepUnreferencedFiles(service.services.orm.em.fork() as EntityManager, service.services, -60_000);
    expect(removed.contents).toBeGreaterThanOrEqual(1);
    const keys = await contentKeys();
    expect(keys).not.toContain(orphan);
    expect(keys).toContain(kept.resource.resourceSource.path);
  });

  it('the connection check writes to both buckets', async () => {
    const answer = await service.graphql<{ connectionCheck: { checkStatus: string; entries: { name: string; checkStatus: string; message: string }[] } }>(
      '{ connectionCheck(repositoryName: "default") { checkStatus entries { name checkStatus message } } }',
    );
    expect(answer.errors).toBeUndefined();
    const entries = Object.fromEntries(answer.data!.connectionCheck.entries.map((entry) => [entry.name, entry]));
    expect(entries['content storage check']).toMatchObject({ checkStatus: 'ok', message: `s3://${s3.bucket} is writable` });
    expect(entries['cache storage check']).toMatchObject({ checkStatus: 'ok', message: `s3://${s3.cacheBucket} is writable` });
  });
});

describe('page images in the cache bucket', () => {
  it('a conversion reads its input from S3 and stores its pages in the cache bucket; a purge takes them away', async () => {
    const { content, job } = await convertBytes(service, textPdf(2), 'two-pages.pdf');
    expect(job.state).toBe('Done');
    const listed = await call(contentUrl(service, `/content/${content.id}/representations`));
    expect(listed.body.count).toBe(2);
    const pages = await sql<{ storage_path: string; file_size: string }>(service, 'select storage_path, file_size from representation where source_entry_id = ? order by page', [content.id]);
    const keys = await cacheKeys();
    for (const page of pages) expect(keys).toContain(page.storage_path);
    expect(keys.filter((key) => key.startsWith('.tmp/'))).toEqual([]);
    expect(await cachedFiles(service)).toEqual([]);

    const first = await fetch(contentUrl(service, `/representations/${listed.body.entries[0].id}/download`));
    expect(first.status).toBe(200);
    const png = Buffer.from(await first.arrayBuffer());
    expect(png.length).toBe(Number(pages[0]!.file_size));
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    expect((await call(contentUrl(service, `/content/${content.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    const after = await cacheKeys();
    for (const page of pages) expect(after).not.toContain(page.storage_path);
    expect(await contentKeys()).not.toContain(content.resource.resourceSource.path);
  });
});

describe('a merge', () => {
  it('reads its inputs from the bucket and stores the merged PDF there', async () => {
    const first = await newContent(service, { name: 'first.pdf', bytes: textPdf(2) });
    const second = await newContent(service, { name: 'second.pdf', bytes: textPdf(1) });
    const started = await call(contentUrl(service, '/convert/merge'), json('POST', { contentIds: [first.id, second.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'merged' } }));
    expect(started.status).toBe(200);
    const job = await finishedJob(service, started.body.jobId);
    expect(job.state).toBe('Done');
    const result = JSON.parse(job.serviceRequestJob.serializedResult);
    expect(result).toMatchObject({ pages: 3, pagesPerInput: [2, 1] });
    const mergedContent = await call(contentUrl(service, `/content/${result.contentId}`));
    expect(await contentKeys()).toContain(mergedContent.body.resource.resourceSource.path);
    const pdf = await download(result.contentId);
    expect((await pdf.text()).startsWith('%PDF-')).toBe(true);
  });
});
