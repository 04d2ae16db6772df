import { createHash, randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from './file-store.js';
import { HEAD_BYTES, InvalidStoragePathError, StoredFileUnavailableError, TooLargeError } from './store.js';

let dir: string;
let store: FileStore;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'file-store-test-'));
  store = new FileStore(path.join(dir, 'storage'));
  await store.init();
});

afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** A stream of `data` in chunks of irregular sizes (1 byte … 100 KiB). */
function chunked(data: Buffer, delayEvery = 0): Readable {
  return Readable.from(
    (async function* () {
      let offset = 0;
      let i = 0;
      while (offset < data.length) {
        const size = [1, 7, 4096, 65536, 100_000, 333][i % 6]!;
        yield data.subarray(offset, offset + size);
        offset += size;
        i++;
        if (delayEvery && i % delayEvery === 0) await new Promise((r) => setImmediate(r));
      }
    })(),
    { objectMode: false },
  );
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const tempEntries = () => fsp.readdir(path.join(store.root, '.tmp'));

describe('init and sweepTemporary', () => {
  it('creates the root and .tmp', async () => {
    expect((await fsp.stat(store.root)).isDirectory()).toBe(true);
    expect((await fsp.stat(path.join(store.root, '.tmp'))).isDirectory()).toBe(true);
    await store.init(); // idempotent
  });

  it('deletes every leftover in .tmp (files and directories)', async () => {
    const tmp = path.join(store.root, '.tmp');
    await fsp.writeFile(path.join(tmp, 'upload-1'), 'half');
    await fsp.mkdir(path.join(tmp, 'dir'));
    await fsp.writeFile(path.join(tmp, 'dir', 'x'), 'x');
    await fsp.writeFile(path.join(store.root, 'kept'), 'committed');
    expect(await store.sweepTemporary()).toBe(2);
    expect(await tempEntries()).toEqual([]);
    expect(await fsp.readFile(path.join(store.root, 'kept'), 'utf8')).toBe('committed');
  });

  it('with olderThanMs, keeps recent temp files (uploads of other processes)', async () => {
    const tmp = path.join(store.root, '.tmp');
    await fsp.writeFile(path.join(tmp, 'old'), 'o');
    await fsp.writeFile(path.join(tmp, 'new'), 'n');
    const past = new Date(Date.now() - 3_600_000);
    await fsp.utimes(path.join(tmp, 'old'), past, past);
    expect(await store.sweepTemporary({ olderThanMs: 60_000 })).toBe(1);
    expect(await tempEntries()).toEqual(['new']);
  });

  it('returns 0 when .tmp does not exist', async () => {
    const other = new FileStore(path.join(dir, 'never-initialised'));
    expect(await other.sweepTemporary()).toBe(0);
  });
});

describe('pathFor and path validation', () => {
  it('derives xx/yy/<id> from the id only, deterministically', () => {
    const p = store.pathFor('abc_DEF-123');
    expect(p).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{2}\/abc_DEF-123$/);
    expect(store.pathFor('abc_DEF-123')).toBe(p);
    expect(new FileStore('/elsewhere').pathFor('abc_DEF-123')).toBe(p);
    expect(store.pathFor('abc_DEF-124')).not.toBe(p);
  });

  it.each(['', '../etc', 'a/b', 'a\\b', 'a.b', '.', '..', 'ä', 'a b', 'a\0b', 'x'.repeat(201)])(
    'rejects the id %j',
    (id) => {
      expect(() => store.pathFor(id)).toThrow(InvalidStoragePathError);
    },
  );

  it('rejects a non-string id', () => {
    expect(() => store.pathFor(42 as unknown as string)).toThrow(InvalidStoragePathError);
  });

  it.each(['', '/etc/passwd', '../x', 'a/../../x', 'a/./b', '.tmp/x', 'a//b', 'a/', 'a\0', 'a/b c'])(
    'rejects the relative path %j',
    async (rel) => {
      expect(() => store.absolutePath(rel)).toThrow(InvalidStoragePathError);
      await expect(store.exists(rel)).rejects.toThrow(InvalidStoragePathError);
      await expect(store.remove(rel)).rejects.toThrow(InvalidStoragePathError);
    },
  );

  it('ids may start with - or _ and still make valid paths', async () => {
    for (const id of ['-abc', '_x', '-', 'A'.repeat(200)]) {
      const rel = store.pathFor(id);
      expect(store.absolutePath(rel).startsWith(store.root + path.sep)).toBe(true);
      expect(await store.exists(rel)).toBe(false);
    }
  });

  it('accepts paths below the root', () => {
    expect(store.absolutePath('ab/cd/id-1')).toBe(path.join(store.root, 'ab', 'cd', 'id-1'));
    expect(store.absolutePath('ab/cd/id-1/page-1.png')).toBe(path.join(store.root, 'ab/cd/id-1/page-1.png'));
  });
});

describe('stageSyncedFile', () => {
  it('moves a synced file of .tmp into place at commit (the same inode: renamed, not copied), and a discard removes one', async () => {
    const folder = path.join(store.scratchDirectory(), 'render-job');
    await fsp.mkdir(folder);
    const page = path.join(folder, 'page-1.png');
    const bytes = randomBytes(300_000);
    await fsp.writeFile(page, bytes, { flush: true });
    const { ino } = await fsp.stat(page);
    const staged = await store.stageSyncedFile(page);
    expect(staged.size).toBe(bytes.length);
    const target = store.pathFor('page_png_1');
    await staged.commit(target);
    const placed = store.absolutePath(target);
    expect((await fsp.stat(placed)).ino).toBe(ino);
    expect(await fsp.readFile(placed)).toEqual(bytes);
    await expect(fsp.access(page)).rejects.toThrow();

    const other = path.join(folder, 'page-2.png');
    await fsp.writeFile(other, 'x');
    await (await store.stageSyncedFile(other)).discard();
    await expect(fsp.access(other)).rejects.toThrow();
  });

  it('refuses a file outside .tmp and anything but a regular file (a render process names the file)', async () => {
    const outside = path.join(dir, 'outside.png');
    await fsp.writeFile(outside, 'x');
    await expect(store.stageSyncedFile(outside)).rejects.toBeInstanceOf(InvalidStoragePathError);
    await expect(store.stageSyncedFile(path.join(store.scratchDirectory(), '..', '..', 'outside.png'))).rejects.toBeInstanceOf(InvalidStoragePathError);
    const link = path.join(store.scratchDirectory(), 'link.png');
    await fsp.symlink(outside, link);
    await expect(store.stageSyncedFile(link)).rejects.toBeInstanceOf(InvalidStoragePathError);
    expect(await fsp.readFile(outside, 'utf8')).toBe('x');
  });
});

describe('receive', () => {
  it('computes size, md5 and head of a multi-MB stream in one pass, then commits to pathFor(id)', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 123);
    const staged = await store.receive(chunked(data), { maxBytes: 10 * 1024 * 1024 });
    expect(staged.size).toBe(data.length);
    expect(staged.md5).toBe(md5(data));
    expect(staged.head.equals(data.subarray(0, HEAD_BYTES))).toBe(true);
    expect(path.dirname(staged.tempPath)).toBe(path.join(store.root, '.tmp'));
    expect((await fsp.readFile(staged.tempPath)).equals(data)).toBe(true);

    const rel = store.pathFor('content-1');
    await staged.commit(rel);
    expect((await fsp.readFile(path.join(store.root, rel))).equals(data)).toBe(true);
    expect(await store.exists(rel)).toBe(true);
    expect(await tempEntries()).toEqual([]);
    await staged.discard(); // no-op after commit
    expect(await store.exists(rel)).toBe(true);
    await expect(staged.commit(store.pathFor('content-2'))).rejects.toThrow(/committed/);
  });

  it('handles a slow, yielding source and a small file (head = whole file)', async () => {
    const data = Buffer.from('hello, world\n'.repeat(100));
    const staged = await store.receive(chunked(data, 1), { maxBytes: 1_000_000 });
    expect(staged.size).toBe(data.length);
    expect(staged.md5).toBe(md5(data));
    expect(staged.head.equals(data)).toBe(true);
    await staged.discard();
  });

  it('accepts string chunks and an empty stream', async () => {
    const s = await store.receive(Readable.from(['abc', 'déf']), { maxBytes: 100 });
    expect(s.size).toBe(Buffer.byteLength('abcdéf'));
    expect(s.md5).toBe(md5(Buffer.from('abcdéf')));
    await s.discard();
    const empty = await store.receive(Readable.from([]), { maxBytes: 0 });
    expect(empty.size).toBe(0);
    expect(empty.md5).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(empty.head.length).toBe(0);
    await empty.commit(store.pathFor('empty'));
    expect((await store.stat(store.pathFor('empty')))?.size).toBe(0);
  });

  it('hashes concurrent uploads independently', async () => {
    const inputs = Array.from({ length: 6 }, (_, i) => randomBytes(300_000 * (i + 1)));
    const staged = await Promise.all(inputs.map((d) => store.receive(chunked(d), { maxBytes: 1e9 })));
    staged.forEach((s, i) => {
      expect(s.size).toBe(inputs[i]!.length);
      expect(s.md5).toBe(md5(inputs[i]!));
    });
    await Promise.all(staged.map((s) => s.discard()));
    expect(await tempEntries()).toEqual([]);
  });

  it('accepts exactly maxBytes', async () => {
    const data = randomBytes(1000);
    const staged = await store.receive(chunked(data), { maxBytes: 1000 });
    expect(staged.size).toBe(1000);
    await staged.discard();
  });

  it('rejects with TooLargeError past maxBytes and leaves no temp file', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const source = chunked(data);
    const error = await store.receive(source, { maxBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).limit).toBe(1024 * 1024);
    expect(source.destroyed).toBe(true);
    expect(await tempEntries()).toEqual([]);
  });

  it('removes the temp file and rejects when the source errors', async () => {
    const source = Readable.from(
      (async function* () {
        yield randomBytes(200_000);
        await new Promise((r) => setTimeout(r, 5));
        yield randomBytes(200_000);
        throw new Error('connection reset');
      })(),
      { objectMode: false },
    );
    await expect(store.receive(source, { maxBytes: 1e9 })).rejects.toThrow('connection reset');
    expect(await tempEntries()).toEqual([]);
  });

  it('removes the temp file and rejects when aborted through the signal', async () => {
    const controller = new AbortController();
    const source = new Readable({ read() {} });
    source.push(randomBytes(100_000));
    const promise = store.receive(source, { maxBytes: 1e9, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(promise).rejects.toThrow(/abort/i);
    expect(await tempEntries()).toEqual([]);
  });

  it('removes the temp file when an HTTP client disconnects mid-upload', async () => {
    let result: Promise<unknown> | undefined;
    const received = new Promise<void>((resolve) => {
      const server = http.createServer((req) => {
        result = store.receive(req, { maxBytes: 1e9 }).then(
          () => 'resolved',
          (e: unknown) => e,
        );
        req.once('data', () => resolve());
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        const client = http.request({ port, host: '127.0.0.1', method: 'PUT', headers: { 'content-length': '10000000' } });
        client.on('error', () => undefined);
        client.write(randomBytes(300_000));
        received.then(() => {
          client.destroy();
          server.close();
        });
      });
    });
    await received;
    const outcome = await result;
    expect(outcome).toBeInstanceOf(Error);
    expect(await tempEntries()).toEqual([]);
  });

  it('discard deletes the temp file; commit after discard fails', async () => {
    const staged = await store.receive(chunked(Buffer.from('x')), { maxBytes: 10 });
    await staged.discard();
    await expect(fsp.stat(staged.tempPath)).rejects.toThrow(/ENOENT/);
    await staged.discard();
    await expect(staged.commit(store.pathFor('x'))).rejects.toThrow(/discarded/);
  });

  it('commit rejects an invalid path and keeps the staged file usable', async () => {
    const staged = await store.receive(chunked(Buffer.from('abc')), { maxBytes: 10 });
    await expect(staged.commit('../escape')).rejects.toThrow(InvalidStoragePathError);
    await staged.commit(store.pathFor('ok'));
    expect(await fsp.readFile(store.absolutePath(store.pathFor('ok')), 'utf8')).toBe('abc');
  });

  it('makes a directory again when it was removed behind the store', async () => {
    const first = await store.receive(chunked(Buffer.from('one')), { maxBytes: 10 });
    await first.commit('fan/out/one');
    await fsp.rm(path.join(store.root, 'fan'), { recursive: true });
    const second = await store.receive(chunked(Buffer.from('two')), { maxBytes: 10 });
    await second.commit('fan/out/two');
    expect(await fsp.readFile(store.absolutePath('fan/out/two'), 'utf8')).toBe('two');
  });

  it('stores uploads around the one-call write size (64 KiB) byte for byte, in one chunk or many', async () => {
    for (const size of [1, 65_535, 65_536, 65_537, 200_000]) {
      const data = randomBytes(size);
      for (const source of [Readable.from([data]), chunked(data)]) {
        const staged = await store.receive(source, { maxBytes: 1e6 });
        expect([staged.size, staged.md5]).toEqual([size, md5(data)]);
        const rel = store.pathFor(`size-${size}-${staged.tempPath.slice(-6)}`);
        await staged.commit(rel);
        expect((await fsp.readFile(store.absolutePath(rel))).equals(data)).toBe(true);
      }
    }
    expect(await tempEntries()).toEqual([]);
  });

  it('makes .tmp again when it was removed behind the store, for small and large uploads', async () => {
    for (const size of [10, 300_000]) {
      await fsp.rm(path.join(store.root, '.tmp'), { recursive: true });
      const data = randomBytes(size);
      const staged = await store.receive(chunked(data), { maxBytes: 1e6 });
      expect((await fsp.readFile(staged.tempPath)).equals(data)).toBe(true);
      await staged.discard();
    }
  });

  it('holdSmall: a small upload stays in memory until commit writes and places it; a larger one is written as it arrives', async () => {
    const small = randomBytes(65_536);
    const held = await store.receive(chunked(small), { maxBytes: 1e6, holdSmall: true });
    expect([held.size, held.md5]).toEqual([small.length, md5(small)]);
    expect(await tempEntries()).toEqual([]);
    await fsp.rm(path.join(store.root, '.tmp'), { recursive: true }); // made again by the worker
    await held.commit(store.pathFor('held'));
    expect((await fsp.readFile(store.absolutePath(store.pathFor('held')))).equals(small)).toBe(true);
    expect(await tempEntries()).toEqual([]);

    const dropped = await store.receive(chunked(Buffer.from('never stored')), { maxBytes: 1e6, holdSmall: true });
    await dropped.discard();
    await expect(dropped.commit(store.pathFor('dropped'))).rejects.toThrow(/discarded/);
    expect(await store.exists(store.pathFor('dropped'))).toBe(false);

    const large = randomBytes(65_537);
    const streamed = await store.receive(chunked(large), { maxBytes: 1e6, holdSmall: true });
    expect((await fsp.readFile(streamed.tempPath)).equals(large)).toBe(true);
    await streamed.commit(store.pathFor('streamed'));
    expect((await fsp.readFile(store.absolutePath(store.pathFor('streamed')))).equals(large)).toBe(true);
  });

  it('holdSmall: a commit whose write failed cannot be retried (the bytes went to the worker) and leaves nothing behind', async () => {
    const staged = await store.receive(chunked(Buffer.from('abc')), { maxBytes: 10, holdSmall: true });
    await fsp.writeFile(staged.tempPath, 'in the way'); // the write never overwrites
    await expect(staged.commit(store.pathFor('blocked'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await tempEntries()).toEqual([]);
    await expect(staged.commit(store.pathFor('blocked'))).rejects.toThrow(/discarded/);
    expect(await store.exists(store.pathFor('blocked'))).toBe(false);
  });

  it('rejects a negative or NaN maxBytes', async () => {
    await expect(store.receive(Readable.from([]), { maxBytes: -1 })).rejects.toThrow(RangeError);
    await expect(store.receive(Readable.from([]), { maxBytes: Number.NaN })).rejects.toThrow(RangeError);
  });
});

describe('remove, exists, stat, copy', () => {
  async function put(id: string, data: Buffer | string): Promise<string> {
    const staged = await store.receive(Readable.from([Buffer.from(data)]), { maxBytes: 1e9 });
    const rel = store.pathFor(id);
    await staged.commit(rel);
    return rel;
  }

  it('remove deletes a file and ignores a missing one', async () => {
    const rel = await put('a', 'data');
    expect(await store.exists(rel)).toBe(true);
    await store.remove(rel);
    expect(await store.exists(rel)).toBe(false);
    await store.remove(rel);
    await store.remove(store.pathFor('never-existed'));
  });

  it('stat returns size or undefined', async () => {
    const rel = await put('a', '12345');
    expect((await store.stat(rel))?.size).toBe(5);
    expect(await store.stat(store.pathFor('missing'))).toBeUndefined();
  });

  it('copy writes an independent copy through a temp file', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const from = await put('src', data);
    const to = store.pathFor('dst');
    await store.copy(from, to);
    expect((await fsp.readFile(store.absolutePath(to))).equals(data)).toBe(true);
    await store.remove(from);
    expect(await store.exists(to)).toBe(true);
    expect(await tempEntries()).toEqual([]);
  });

  it('copy of a missing file rejects and leaves no temp file', async () => {
    await expect(store.copy(store.pathFor('nope'), store.pathFor('dst'))).rejects.toThrow(StoredFileUnavailableError);
    expect(await tempEntries()).toEqual([]);
    expect(await store.exists(store.pathFor('dst'))).toBe(false);
  });
});

describe('checkWritable', () => {
  it('reports a writable store and leaves no probe file', async () => {
    const result = await store.checkWritable();
    expect(result.ok).toBe(true);
    expect(result.message).toContain(store.root);
    expect(await tempEntries()).toEqual([]);
  });

  it('reports a store that cannot be written', async () => {
    const file = path.join(dir, 'a-file');
    await fsp.writeFile(file, 'not a directory');
    const broken = new FileStore(path.join(file, 'storage'));
    const result = await broken.checkWritable();
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/not writable/);
  });
});
