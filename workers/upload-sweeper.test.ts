import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../test/helpers/service.js';
import { startUploadSweeper } from './upload-sweeper.js';

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
