import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, sql } from '../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../test/helpers/service.js';
import { indexBatch, storeTexts } from './extract-text.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe('a batch of text extractions', () => {
  it('passes over a resource purged while the batch ran (no failure), and fails one whose bytes alone are missing', async () => {
    const content = await newContent(service, { name: 'bytes-lost.txt', bytes: 'words' });
    const [kept] = await sql<{ id: string; storage_path: string }>(service, 'select id, storage_path from resource where id = ?', [content.resource.id]);
    const resource = (id: string, storagePath: string) => ({ id, repositoryId: 'svc.repository.default', name: 'x.txt', mimeType: 'text/plain', fileSize: 5, storagePath });
    const em = service.services.orm.em.fork() as EntityManager;
    // its row and bytes gone (a purge between the batch's take and its read), and a row whose bytes are gone
    const outcomes = await indexBatch(service.services, em, 'svc.repository.default', [resource('purged-meanwhile', 'nowhere/purged'), resource(kept!.id, 'nowhere/lost')]);
    expect(outcomes).toEqual([
      { resource: expect.objectContaining({ id: 'purged-meanwhile' }), gone: true },
      { resource: expect.objectContaining({ id: kept!.id }), failure: expect.objectContaining({ fileMissing: true, message: expect.stringContaining('ENOENT') }) },
    ]);
  });

  it('stores the texts Postgres takes and fails only the one it refuses, which the queue does not keep', async () => {
    const [good, bad] = [await newContent(service, { name: 'takes.txt', bytes: 'x' }), await newContent(service, { name: 'refused.txt', bytes: 'y' })];
    // their own extraction jobs first, so that what is stored below is this call's alone
    const ids = [good.resource.id, bad.resource.id];
    while ((await sql(service, 'select 1 from resource_text where resource_id in (?, ?)', ids)).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    await sql(service, 'delete from resource_text where resource_id in (?, ?)', ids);
    const resource = (content: Record<string, any>, name: string) => ({ id: content.resource.id, repositoryId: 'svc.repository.default', name, mimeType: 'text/plain', fileSize: 1, storagePath: 'x' });
    const em = service.services.orm.em.fork() as EntityManager;
    // a lone surrogate, as no extraction now leaves one (storableText): Postgres refuses it in JSON
    const outcomes = await storeTexts(service.services, em, 'svc.repository.default', [
      { resource: resource(good, 'takes.txt'), text: { resourceId: good.resource.id, text: 'takenword', truncated: false } },
      { resource: resource(bad, 'refused.txt'), text: { resourceId: bad.resource.id, text: 'half \ud83d', truncated: false } },
    ]);
    expect(outcomes).toEqual([
      expect.objectContaining({ text: expect.objectContaining({ resourceId: good.resource.id }) }),
      { resource: expect.objectContaining({ name: 'refused.txt' }), failure: { reasonCode: 'extractionFailed', message: expect.stringMatching(/^the text of refused\.txt could not be stored: /), fileMissing: false } },
    ]);
    const stored = await sql<{ resource_id: string }>(service, 'select resource_id from resource_text where resource_id in (?, ?)', ids);
    expect(stored.map((row) => row.resource_id)).toEqual([good.resource.id]);
  });
});
