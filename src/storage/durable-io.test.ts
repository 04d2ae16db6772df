import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { placeFile, writeNewFile } from './durable-io.js';

let dir: string;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'durable-io-test-'));
});

afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('writeNewFile (in a worker thread)', () => {
  it('writes all parts, empty ones included, in order', async () => {
    const file = path.join(dir, 'a');
    await writeNewFile(file, [Buffer.from('one '), Buffer.alloc(0), Buffer.from('two '), new Uint8Array([0x33])]);
    expect(await fsp.readFile(file, 'utf8')).toBe('one two 3');
  });

  it('writes an empty file for no parts', async () => {
    const file = path.join(dir, 'empty');
    await writeNewFile(file, []);
    expect((await fsp.stat(file)).size).toBe(0);
  });

  it('never overwrites: an existing file is an EEXIST error with its code, and keeps its bytes', async () => {
    const file = path.join(dir, 'taken');
    await fsp.writeFile(file, 'old');
    const error = await writeNewFile(file, [Buffer.from('new')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open', path: file });
    expect(await fsp.readFile(file, 'utf8')).toBe('old');
  });

  it('a missing directory is an ENOENT error', async () => {
    await expect(writeNewFile(path.join(dir, 'missing', 'a'), [Buffer.from('x')])).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('runs many calls concurrently, each answered once', async () => {
    const files = Array.from({ length: 40 }, (_, i) => path.join(dir, `f${i}`));
    await Promise.all(files.map((file, i) => writeNewFile(file, [Buffer.from(`content ${i}`)])));
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
