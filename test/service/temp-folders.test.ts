/**
 * What the service leaves in the OS temp folder (src/temp-folders.ts): nothing once stopped, by its stop
 * or by a second signal's fast exit; a process killed leaves its S3 scratch folders, which the next
 * start removes.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';
import { startServiceProcess } from '../helpers/process.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { adminPassword, createTestDatabase, startTestService } from '../helpers/service.js';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(() => s3?.stop());

/** the scratch folders of the test's two buckets */
const scratchFolders = async () => (await fs.readdir(os.tmpdir())).filter((name) => [s3.bucket, s3.cacheBucket].some((bucket) => name.startsWith(`crs-s3-${bucket}-`))).sort();

describe("the S3 stores' scratch folders", () => {
  it('go when the service stops', async () => {
    const service = await startTestService(s3.env);
    expect(await scratchFolders()).toHaveLength(2);
    await service.stop();
    expect(await scratchFolders()).toEqual([]);
  });

  it("of a process killed stay until the next start removes them; a second signal's fast exit leaves none", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-temp-folders-'));
    const env = { ...s3.env, DATABASE_URL: await createTestDatabase(), DATA_DIR: dataDir, ADMIN_PASSWORD: adminPassword, LOG_LEVEL: 'info' };
    try {
      const killed = await startServiceProcess({ ...env, PORT: String(await freePort()) });
      const left = await scratchFolders();
      expect(left).toHaveLength(2);
      killed.child.kill('SIGKILL');
      await killed.exited;
      expect(await scratchFolders()).toEqual(left);

      const next = await startServiceProcess({ ...env, PORT: String(await freePort()) });
      const made = await scratchFolders();
      expect(made).toHaveLength(2);
      expect(made.filter((name) => left.includes(name))).toEqual([]);
      // an upload under way holds the stop in its drain (SHUTDOWN_DRAIN_MS, 10 s): the second signal comes during it
      const session = (await (await fetch(`${next.baseUrl}/api/v1/authenticate?user=admin&password=${adminPassword}`, { method: 'POST' })).json()) as string;
      const upload = http.request(`${next.baseUrl}/api/v1/access.svc.content.default/v1/folder?sessionId=${session}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000' } });
      upload.on('error', () => undefined);
      upload.write('{"name": "');
      await new Promise((resolve) => setTimeout(resolve, 200));
      next.child.kill('SIGTERM');
      while (!next.output().includes('shutting down')) await new Promise((resolve) => setTimeout(resolve, 10));
      next.child.kill('SIGTERM');
      expect(await next.exited).toBe(128 + os.constants.signals.SIGTERM);
      expect(await scratchFolders()).toEqual([]);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
