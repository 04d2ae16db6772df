import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, sql } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { extractionProcess } from '../../../test/helpers/workers.js';
import { withStatementTimeout } from '../../db/statement-timeout.js';
import { indexBatch, storeTexts } from './extraction-job.js';
import type { ResourceToIndex } from './operations.js';

let service: TestService;
let extraction: ReturnType<typeof extractionProcess>;
beforeAll(async () => {
  service = await startTestService();
  extraction = extractionProcess(service.config);
});
afterAll(async () => {
  extraction?.pool.close();
  await service?.stop();
});

/** Contents whose own extraction jobs have ended and whose texts are removed again, so that what is stored below is the test's alone. */
async function contentsWithoutText<U extends { name: string; bytes?: string }[]>(...uploads: U): Promise<{ [K in keyof U]: Record<string, any> }> {
  const contents = await Promise.all(uploads.map((upload) => newContent(service, upload)));
  const ids = contents.map((content) => content.resource.id);
  while ((await sql(service, 'select 1 from resource_text where resource_id = any(array[?]::text[])', [ids])).length < ids.length) await new Promise((resolve) => setTimeout(resolve, 50));
  await sql(service, 'delete from resource_text where resource_id = any(array[?]::text[])', [ids]);
  return contents as { [K in keyof U]: Record<string, any> };
}

describe('a batch of text extractions', () => {
  it('passes over a resource purged while the batch ran (no failure), and fails one whose bytes alone are missing', async () => {
    const content = await newContent(service, { name: 'bytes-lost.txt', bytes: 'words' });
    const [kept] = await sql<{ id: string; storage_path: string }>(service, 'select id, storage_path from resource where id = ?', [content.resource.id]);
    const resource = (id: string, storagePath: string) => ({ id, repositoryId: 'svc.repository.default', name: 'x.txt', mimeType: 'text/plain', fileSize: 5, storagePath });
    const em = service.services.orm.em.fork() as EntityManager;
    // its row and bytes gone (a purge between the batch's take and its read), and a row whose bytes are gone
    const outcomes = await indexBatch(service.services, extraction.extractor, em, 'svc.repository.default', [resource('purged-meanwhile', 'nowhere/purged'), resource(kept!.id, 'nowhere/lost')]);
    expect(outcomes).toEqual([
      { resource: expect.objectContaining({ id: 'purged-meanwhile' }), gone: true },
      { resource: expect.objectContaining({ id: kept!.id }), failure: expect.objectContaining({ fileMissing: true, message: 'the stored file nowhere/lost is missing' }) },
    ]);
  });

  it('stores the texts Postgres takes and fails only the one it refuses, which the queue does not keep', async () => {
    const [good, bad] = await contentsWithoutText({ name: 'takes.txt' }, { name: 'refused.txt' });
    const ids = [good.resource.id, bad.resource.id];
    const resource = (content: Record<string, any>, name: string) => ({ id: content.resource.id, repositoryId: 'svc.repository.default', name, mimeType: 'text/plain', fileSize: 1, storagePath: 'x' });
    const em = service.services.orm.em.fork() as EntityManager;
    // a lone surrogate, as no extraction now leaves one (storableText): Postgres refuses it in JSON
    const outcomes = await storeTexts(service.services, em, 'svc.repository.default', [
      { resource: resource(good, 'takes.txt'), text: { resourceId: good.resource.id, text: 'takenword', truncated: false, notes: [] } },
      { resource: resource(bad, 'refused.txt'), text: { resourceId: bad.resource.id, text: 'half \ud83d', truncated: false, notes: [] } },
    ]);
    expect(outcomes).toEqual([
      expect.objectContaining({ text: expect.objectContaining({ resourceId: good.resource.id }) }),
      { resource: expect.objectContaining({ name: 'refused.txt' }), failure: { reasonCode: 'extractionFailed', message: expect.stringMatching(/^the text of refused\.txt could not be stored: /), fileMissing: false } },
    ]);
    const stored = await sql<{ resource_id: string }>(service, 'select resource_id from resource_text where resource_id = any(array[?]::text[])', [ids]);
    expect(stored.map((row) => row.resource_id)).toEqual([good.resource.id]);
  });

  it('fails alone a text whose indexing runs past JOB_STATEMENT_TIMEOUT_MS, and stores the others', async () => {
    const [fast, slow] = await contentsWithoutText({ name: 'fast.txt' }, { name: 'slow.txt' });
    const config = { ...service.config, JOB_STATEMENT_TIMEOUT_MS: 300 };
    const em = service.services.orm.em.fork() as EntityManager;
    const resource = (content: Record<string, any>, name: string) => ({ id: content.resource.id, repositoryId: 'svc.repository.default', name, mimeType: 'text/plain', fileSize: 1, storagePath: 'x' });
    // as no extraction now leaves it (storableText): to_tsvector would take minutes on it
    const started = performance.now();
    // as a job runs it
    const outcomes = await withStatementTimeout(config.JOB_STATEMENT_TIMEOUT_MS, () =>
      storeTexts({ ...service.services, config }, em, 'svc.repository.default', [
        { resource: resource(fast, 'fast.txt'), text: { resourceId: fast.resource.id, text: 'fastword', truncated: false, notes: [] } },
        { resource: resource(slow, 'slow.txt'), text: { resourceId: slow.resource.id, text: '<!--'.repeat(65_536), truncated: false, notes: [] } },
      ]),
    );
    expect(outcomes[1]).toEqual({
      resource: expect.objectContaining({ name: 'slow.txt' }),
      failure: { reasonCode: 'statementTimeout', message: 'the indexing of the text of slow.txt ran longer than JOB_STATEMENT_TIMEOUT_MS (300 ms) and was cancelled', fileMissing: false },
    });
    // the batch's statement and the slow text's own, each cancelled (the text alone would hold a core for minutes)
    expect(performance.now() - started).toBeLessThan(10_000);
    const stored = await sql<{ resource_id: string }>(service, 'select resource_id from resource_text where resource_id = any(array[?]::text[])', [[fast.resource.id, slow.resource.id]]);
    expect(stored.map((row) => row.resource_id)).toEqual([fast.resource.id]);
  });

  it('tells a kind it does not read by the mark the upload queued without opening the file, and every kind as it does by the file', async () => {
    // binary bytes (control characters): no text type is sniffed, so only the PDF mark could make them read
    const [binary, marked] = await Promise.all([newContent(service, { name: 'plain.bin', bytes: '\u0000\u0001\u0002 binary' }), newContent(service, { name: 'marked.bin', bytes: '\u0000junk%PDF-1.7 binary' })]);
    // their own extraction ended (the marked one fails: it is no PDF)
    while ((await sql(service, 'select 1 from text_extraction_queue where resource_id = any(array[?]::text[])', [[binary.resource.id, marked.resource.id]])).length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const resources = await sql<{ id: string; name: string; mimeType: string; fileSize: number; storagePath: string }>(
      service,
      `select id, name, mime_type as "mimeType", file_size::float8 as "fileSize", storage_path as "storagePath" from resource where id = any(array[?]::text[]) order by name`,
      [[binary.resource.id, marked.resource.id]],
    );
    expect(resources.map((r) => [r.name, r.mimeType])).toEqual([['marked.bin', 'application/octet-stream'], ['plain.bin', 'application/octet-stream']]);
    const [markedResource, binaryResource] = resources.map((r) => ({ ...r, repositoryId: 'svc.repository.default' }));
    const em = service.services.orm.em.fork() as EntityManager;
    const outcomesOf = async (batch: ResourceToIndex[]) =>
      (await indexBatch(service.services, extraction.extractor, em, 'svc.repository.default', batch)).map(({ resource: _, ...outcome }) => outcome);
    const byFile = await outcomesOf([binaryResource!, markedResource!]);
    expect(byFile[0]).toEqual({ text: { resourceId: binaryResource!.id, text: '', truncated: false, notes: ['no text is read from application/octet-stream'] } });
    // the marks as the upload queued them: the same outcomes
    expect(await outcomesOf([{ ...binaryResource!, pdfMark: false }, { ...markedResource!, pdfMark: true }])).toEqual(byFile);
    // told by the mark alone: a file that is not there is not opened
    expect(await outcomesOf([{ ...binaryResource!, pdfMark: false, storagePath: 'nowhere/not-opened' }])).toEqual([byFile[0]]);
  });
});
