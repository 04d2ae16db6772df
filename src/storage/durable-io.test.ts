import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { DurableIoPool, placeFile, writeAndPlaceFile, writeNewFile } from './durable-io.js';

let dir: string;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'durable-io-test-'));
});

afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('writeNewFile (in a worker thread)', () => {
  it('moves a buffer that owns its memory to the worker and writes it', async () => {
    const file = path.join(dir, 'a');
    const data = Buffer.allocUnsafeSlow(5);
    data.write('bytes');
    await writeNewFile(file, data);
    expect(await fsp.readFile(file, 'utf8')).toBe('bytes');
    expect(data.buffer.byteLength).toBe(0); // transferred, not copied
  });

  it('copies a view into a larger buffer (the rest of it stays the caller\'s)', async () => {
    const file = path.join(dir, 'b');
    const backing = Buffer.from('xxpartxx');
    await writeNewFile(file, backing.subarray(2, 6));
    expect(await fsp.readFile(file, 'utf8')).toBe('part');
    expect(backing.toString()).toBe('xxpartxx');
  });

  it('writes an empty file', async () => {
    const file = path.join(dir, 'empty');
    await writeNewFile(file, Buffer.allocUnsafeSlow(0));
    expect((await fsp.stat(file)).size).toBe(0);
  });

  it('never overwrites: an existing file is an EEXIST error with its code, and keeps its bytes', async () => {
    const file = path.join(dir, 'taken');
    await fsp.writeFile(file, 'old');
    const error = await writeNewFile(file, Buffer.from('new')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open', path: file });
    expect(await fsp.readFile(file, 'utf8')).toBe('old');
  });

  it('makes a missing directory (the bytes cannot come back to the caller for a retry)', async () => {
    const file = path.join(dir, 'missing', 'a');
    await writeNewFile(file, Buffer.from('x'));
    expect(await fsp.readFile(file, 'utf8')).toBe('x');
  });

  it('runs many calls concurrently, each answered once', async () => {
    const files = Array.from({ length: 40 }, (_, i) => path.join(dir, `f${i}`));
    await Promise.all(files.map((file, i) => writeNewFile(file, Buffer.from(`content ${i}`))));
    for (const [i, file] of files.entries()) expect(await fsp.readFile(file, 'utf8')).toBe(`content ${i}`);
  });
});

describe('placeFile (in a worker thread)', () => {
  it('renames into directories it makes', async () => {
    const temp = path.join(dir, 'temp');
    await fsp.writeFile(temp, 'bytes');
    const target = path.join(dir, 'x', 'y', 'z', 'file');
    await placeFile(temp, target, false);
    expect(await fsp.readFile(target, 'utf8')).toBe('bytes');
    await expect(fsp.stat(temp)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('makes the directory when one said to be known has gone', async () => {
    const temp = path.join(dir, 'temp');
    await fsp.writeFile(temp, 'bytes');
    const target = path.join(dir, 'gone', 'file');
    await placeFile(temp, target, true);
    expect(await fsp.readFile(target, 'utf8')).toBe('bytes');
  });

  it('a missing temp file is an ENOENT error and creates nothing at the target', async () => {
    const target = path.join(dir, 'd', 'file');
    await expect(placeFile(path.join(dir, 'no-such-temp'), target, false)).rejects.toMatchObject({ code: 'ENOENT', syscall: 'rename' });
    await expect(fsp.stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('writeAndPlaceFile (in a worker thread)', () => {
  it('writes the temp file and renames it into directories it makes, in one call; the bytes move to the worker', async () => {
    const temp = path.join(dir, 'tmp', 'temp');
    const target = path.join(dir, 'x', 'y', 'file');
    const data = Buffer.allocUnsafeSlow(5);
    data.write('bytes');
    await writeAndPlaceFile(temp, data, target, false);
    expect(await fsp.readFile(target, 'utf8')).toBe('bytes');
    await expect(fsp.stat(temp)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(data.buffer.byteLength).toBe(0);
  });

  it('never overwrites the temp file: EEXIST, and nothing is placed', async () => {
    const temp = path.join(dir, 'temp');
    await fsp.writeFile(temp, 'old');
    const target = path.join(dir, 'file');
    await expect(writeAndPlaceFile(temp, Buffer.from('new'), target, false)).rejects.toMatchObject({ code: 'EEXIST', syscall: 'open' });
    await expect(fsp.stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('DurableIoPool when its workers die', () => {
  it('rejects what a dead worker held, starts another for the next call, and stops using workers after three deaths', async () => {
    const script = path.join(dir, 'dying-worker.mjs');
    await fsp.writeFile(script, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(3));\n");
    const pool = new DurableIoPool(pathToFileURL(script));
    const operation = { op: 'place', tempPath: path.join(dir, 'a'), target: path.join(dir, 'b'), parentKnown: true } as const;
    for (let death = 1; death <= 3; death++) {
      expect(pool.usable).toBe(true);
      await expect(pool.run(operation)).rejects.toThrow('durable-io worker exited with code 3');
    }
    expect(pool.usable).toBe(false); // the callers (writeNewFile, placeFile) then run the sequences on their own thread
  });
});
