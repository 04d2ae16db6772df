import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMd5Job, Md5Pool, SMALL_UPLOAD_BYTES } from './md5-hasher.js';

const md5 = (...parts: Buffer[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

describe('createMd5Job', () => {
  it('matches crypto for many small and odd-sized chunks', async () => {
    const parts = Array.from({ length: 500 }, (_, i) => randomBytes((i * 7919) % 70_000));
    const job = createMd5Job();
    for (const p of parts) {
      job.update(p);
      await job.ready();
    }
    expect(await job.digest()).toBe(md5(...parts));
  });

  it('matches crypto for one chunk far larger than the backlog limit (backpressure)', async () => {
    const big = randomBytes(20 * 1024 * 1024 + 5);
    const job = createMd5Job();
    job.update(big);
    const ready = job.ready();
    expect(ready).toBeInstanceOf(Promise); // the worker lags by 20 MiB: wait
    await ready;
    job.update(big.subarray(0, 10));
    expect(await job.digest()).toBe(md5(big, big.subarray(0, 10)));
  });

  it('hashes exactly at, just under and just over the small-upload size, across chunk boundaries', async () => {
    for (const size of [1, SMALL_UPLOAD_BYTES - 1, SMALL_UPLOAD_BYTES, SMALL_UPLOAD_BYTES + 1, 3 * SMALL_UPLOAD_BYTES + 17]) {
      const bytes = randomBytes(size);
      const job = createMd5Job();
      for (let offset = 0; offset < size; offset += 5000) {
        job.update(bytes.subarray(offset, offset + 5000));
        await job.ready();
      }
      expect({ size, digest: await job.digest() }).toEqual({ size, digest: md5(bytes) });
    }
  });

  it('does not see later changes to a buffer it was given (data is copied)', async () => {
    const buf = Buffer.from('original');
    const job = createMd5Job();
    job.update(buf);
    buf.fill(0);
    expect(await job.digest()).toBe(md5(Buffer.from('original')));
  });

  it('runs concurrent jobs independently, and an aborted job does not disturb others', async () => {
    const inputs = Array.from({ length: 8 }, (_, i) => randomBytes(500_000 + i));
    const jobs = inputs.map(() => createMd5Job());
    const aborted = createMd5Job();
    aborted.update(randomBytes(3_000_000));
    inputs.forEach((d, i) => jobs[i]!.update(d));
    aborted.abort();
    const digests = await Promise.all(jobs.map((j) => j.digest()));
    expect(digests).toEqual(inputs.map((d) => md5(d)));
  });

  it('digest of nothing is the empty md5; a second digest is refused', async () => {
    const job = createMd5Job();
    expect(await job.digest()).toBe('d41d8cd98f00b204e9800998ecf8427e');
    await expect(job.digest()).rejects.toThrow();
  });
});

describe('Md5Pool when its workers die', () => {
  it('fails the jobs of a dead worker, starts another for the next job, and stops using workers after three deaths', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'md5-pool-test-'));
    try {
      const script = path.join(dir, 'dying-worker.mjs');
      await fs.writeFile(script, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(5));\n");
      const pool = new Md5Pool(pathToFileURL(script), 2);
      for (let death = 1; death <= 3; death++) {
        expect(pool.usable).toBe(true);
        const job = pool.start();
        job.update(randomBytes(2 * 1024 * 1024)); // a full staging buffer goes to the worker at once
        await expect(job.digest()).rejects.toThrow('md5 worker exited with code 5');
      }
      expect(pool.usable).toBe(false); // createMd5Job then hashes on the main thread
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
