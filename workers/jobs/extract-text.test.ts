import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, sql } from '../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../test/helpers/service.js';
import { indexBatch } from './extract-text.js';

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
});
