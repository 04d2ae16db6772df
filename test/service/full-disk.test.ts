import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadContent } from '../helpers/entries.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** A 512 KiB file system for the content store: mounting needs root (as on these machines and CI). */
async function mountTinyStore(): Promise<string | undefined> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    await fs.rm(dir, { recursive: true, force: true });
    return undefined;
  }
}

const store = await mountTinyStore();

describe.skipIf(!store)('a full content store (needs permission to mount a tmpfs)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ CONTENT_STORAGE_PATH: store! });
  });
  afterAll(async () => {
    await service?.stop();
    execFileSync('umount', [store!]);
    await fs.rm(store!, { recursive: true, force: true });
  });

  it('answers 503 for an upload that does not fit, leaves nothing behind, and keeps serving', async () => {
    const tooBig = await uploadContent(service, { name: 'big.bin', bytes: new Uint8Array(1024 * 1024).fill(1) });
    expect(tooBig.status).toBe(503);
    expect(tooBig.body).toMatchObject({ status: 503, reasonCode: 'unavailable', message: expect.stringContaining('storage is full') });
    expect(await fs.readdir(path.join(store!, '.tmp'))).toEqual([]);
    const pending = await service.services.orm.em.getConnection().execute<{ n: string }[]>('select count(*) as n from resource');
    expect(Number(pending[0]!.n)).toBe(0);

    const small = await uploadContent(service, { name: 'small.txt', bytes: 'still fits' });
    expect(small.status).toBe(201);
  });
});
