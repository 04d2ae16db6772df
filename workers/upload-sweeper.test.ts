import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../test/helpers/service.js';
import { startUnreferencedFileSweeper, startUploadSweeper } from './upload-sweeper.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe('the upload sweeper', () => {
  it('removes uploads and temp files older than an upload may live, and keeps young ones', async () => {
    const stage = async (text: string) => {
      const form = new FormData();
      form.append('file', new Blob([Buffer.from(text)]), `${text}.txt`);
      return (await call(`${service.contentBase}/uploads?sessionId=${service.adminSession}`, { method: 'POST', body: form })).body.uploadId as string;
    };
    const old = await stage('old');
    const young = await stage('young');
    const connection = service.services.orm.em.getConnection();
    await connection.execute(`update resource set created_at = now() - interval '2 hours' where id = ?`, [old]);
    const [oldRow] = await connection.execute<{ storage_path: string }[]>('select storage_path from resource where id = ?', [old]);

    // a temp file left two hours ago by a request that failed, and one being written now
    const fs = await import('node:fs/promises');
    const temp = `${service.config.contentStoragePath}/.tmp`;
    await fs.writeFile(`${temp}/left-behind`, 'x');
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    await fs.utimes(`${temp}/left-behind`, twoHoursAgo, twoHoursAgo);
    await fs.writeFile(`${temp}/in-flight`, 'y');

    const job = startUploadSweeper(service.services, 50);
    try {
      const until = Date.now() + 5_000;
      while (Date.now() < until && (await connection.execute('select 1 from resource where id = ?', [old])).length > 0) {
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await job.stop();
    }
    expect(await connection.execute('select id from resource where id = ?', [old])).toEqual([]);
    expect(await service.services.contentStore.exists(oldRow!.storage_path)).toBe(false);
    expect(await connection.execute('select id from resource where id = ?', [young])).toEqual([{ id: young }]);
    expect((await fs.readdir(temp)).sort()).toEqual(['in-flight']);
  });
});

describe('the unreferenced-file sweeper', () => {
  it('removes old stored files no row refers to (a crash after a deletion committed), keeping referenced and young ones', async () => {
    const fs = await import('node:fs/promises');
    const path = await import('node:path');
    const { contentStore, cacheStore } = service.services;
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('kept bytes')]), 'kept.txt');
    const kept = (await call(`${service.contentBase}/content?sessionId=${service.adminSession}`, { method: 'POST', body: form })).body.resource.resourceSource.path as string;
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    // the file system store: its files are `<root>/<storage path>`
    const fileOf = (store: typeof contentStore, relative: string) => path.join(store.location, relative);
    const place = async (store: typeof contentStore, id: string, old: boolean) => {
      const relative = store.pathFor(id);
      await fs.mkdir(path.dirname(fileOf(store, relative)), { recursive: true });
      await fs.writeFile(fileOf(store, relative), 'orphan');
      if (old) await fs.utimes(fileOf(store, relative), twoHoursAgo, twoHoursAgo);
      return relative;
    };
    await fs.utimes(fileOf(contentStore, kept), twoHoursAgo, twoHoursAgo);
    const orphan = await place(contentStore, 'purged-resource-left-behind', true);
    const young = await place(contentStore, 'resource-of-a-transaction-under-way', false);
    const orphanPage = await place(cacheStore, 'purged-page-left-behind', true);

    const job = startUnreferencedFileSweeper(service.services, 60_000, 10);
    try {
      const until = Date.now() + 5_000;
      while (Date.now() < until && ((await contentStore.exists(orphan)) || (await cacheStore.exists(orphanPage)))) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await job.stop();
    }
    expect(await contentStore.exists(orphan)).toBe(false);
    expect(await cacheStore.exists(orphanPage)).toBe(false);
    expect(await contentStore.exists(kept)).toBe(true);
    expect(await contentStore.exists(young)).toBe(true);
  });
});
