/**
 * The store contract (store.ts), the same tests against both stores: the file system, and S3 through
 * a real S3 peer (s3rver, or the S3 of S3_ENDPOINT: test/helpers/s3.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from '../../test/helpers/s3.js';
import { FileStore } from './file-store.js';
import { createS3Client, S3Store, S3StoreUnavailableError } from './s3-store.js';
import { HEAD_BYTES, InvalidStoragePathError, readStored, StoredFileUnavailableError, TooLargeError, type ByteStore } from './store.js';

interface Fixture {
  store: ByteStore;
  /** every name the store holds, temporary ones included (`.tmp/…`) */
  names(): Promise<string[]>;
  stop(): Promise<void>;
}

const fixtures: Record<'fs' | 's3', () => Promise<Fixture>> = {
  fs: async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'store-test-'));
    const store = new FileStore(dir);
    await store.init();
    return {
      store,
      names: async () => (await fsp.readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name))).sort(),
      stop: () => fsp.rm(dir, { recursive: true, force: true }),
    };
  },
  s3: async () => {
    const s3: TestS3 = await startTestS3();
    const store = new S3Store(s3.client, s3.bucket);
    await store.init();
    return {
      store,
      names: () => s3.keys(s3.bucket),
      stop: async () => {
        await store.close();
        await s3.stop();
      },
    };
  },
};

/** A stream of `data` in chunks of irregular sizes. */
function chunked(data: Buffer): Readable {
  return Readable.from(
    (function* () {
      const sizes = [1, 7, 4096, 65536, 100_000, 333, 1_048_576];
      for (let offset = 0, i = 0; offset < data.length; i++) {
        const size = sizes[i % sizes.length]!;
        yield data.subarray(offset, offset + size);
        offset += size;
      }
    })(),
  );
}

/** A stream that sends `data` and then fails. */
function failingAfter(data: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield data;
      await new Promise((resolve) => setTimeout(resolve, 10));
      throw new Error('the client went away');
    })(),
  );
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

describe.each(['fs', 's3'] as const)('%s store', (kind) => {
  let fixture: Fixture;
  let store: ByteStore;
  let server: http.Server;
  let base: string;
  const sizes: Record<string, number> = {};

  beforeAll(async () => {
    fixture = await fixtures[kind]();
    store = fixture.store;
    // GET /<storage path>?start=&end= sends that range of the stored file, as a download does
    server = http.createServer(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const storagePath = decodeURIComponent(url.pathname.slice(1));
      try {
        const file = await store.open(storagePath, url.searchParams.has('size') ? Number(url.searchParams.get('size')) : sizes[storagePath]!);
        try {
          res.writeHead(200);
          await file.send(res, Number(url.searchParams.get('start')), Number(url.searchParams.get('end')));
        } finally {
          await file.close();
        }
      } catch (error) {
        res.writeHead(error instanceof StoredFileUnavailableError ? 503 : 500).end((error as Error).message);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fixture.stop();
  });

  const get = async (storagePath: string, start: number, end: number, size?: number) => {
    const response = await fetch(`${base}/${encodeURIComponent(storagePath)}?start=${start}&end=${end}${size === undefined ? '' : `&size=${size}`}`);
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  /** Stores `data` at the path of `id` as an upload does; answers the path. */
  const put = async (id: string, data: Buffer, destination = true) => {
    const storagePath = store.pathFor(id);
    const staged = await store.receive(chunked(data), { maxBytes: data.length, holdSmall: true, ...(destination ? { destination: storagePath } : {}) });
    await staged.commit(storagePath);
    sizes[storagePath] = data.length;
    return storagePath;
  };

  const committed = async () => (await fixture.names()).filter((name) => !name.startsWith('.tmp/'));
  const temporary = async () => (await fixture.names()).filter((name) => name.startsWith('.tmp/'));

  it('receives a stream with its size, md5 and head computed on the way, and places it at the path of its id', async () => {
    const data = randomBytes(300_000);
    const storagePath = store.pathFor('first-upload');
    const staged = await store.receive(chunked(data), { maxBytes: 1e6, destination: storagePath });
    expect({ size: staged.size, md5: staged.md5 }).toEqual({ size: data.length, md5: md5(data) });
    expect(staged.head.equals(data.subarray(0, HEAD_BYTES))).toBe(true);
    await staged.commit(storagePath);
    await staged.discard(); // a no-op once committed
    expect(storagePath).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{2}\/first-upload$/);
    expect(await committed()).toContain(storagePath);
    expect(await temporary()).toEqual([]);
    expect((await readStored(store, storagePath, data.length)).equals(data)).toBe(true);
  });

  it('a large upload (several S3 parts) arrives whole, hashed, without a temporary left', async () => {
    const data = randomBytes(21 * 1024 * 1024 + 5);
    const storagePath = await put('large-upload', data);
    const opened = await store.open(storagePath, data.length);
    await opened.close();
    expect(opened.size).toBe(data.length);
    const back = await readStored(store, storagePath, data.length);
    expect(md5(back)).toBe(md5(data));
    expect(await temporary()).toEqual([]);
  });

  it('an upload whose path is decided later (a page image replacing another) replaces the stored one at commit', async () => {
    const storagePath = await put('replaced', Buffer.from('the first page image'));
    const staged = await store.receive(chunked(Buffer.from('the second')), { maxBytes: 100 });
    expect((await readStored(store, storagePath, 20)).toString()).toBe('the first page image');
    await staged.commit(storagePath);
    expect((await readStored(store, storagePath, 10)).toString()).toBe('the second');
    expect(await temporary()).toEqual([]);
  });

  it('an upload over maxBytes, a failing source and an aborted transfer (during it or before it) leave nothing (no object, no part, no temporary)', async () => {
    const before = await fixture.names();
    const big = randomBytes(18 * 1024 * 1024);
    for (const destination of [undefined, store.pathFor('never-kept')]) {
      await expect(store.receive(chunked(Buffer.alloc(101)), { maxBytes: 100, destination })).rejects.toBeInstanceOf(TooLargeError);
      await expect(store.receive(chunked(big), { maxBytes: 17 * 1024 * 1024, destination })).rejects.toBeInstanceOf(TooLargeError);
      await expect(store.receive(failingAfter(big), { maxBytes: 1e9, destination })).rejects.toThrow('the client went away');
      const controller = new AbortController();
      const aborted = store.receive(failingAfter(Buffer.alloc(1000)), { maxBytes: 1e9, destination, signal: controller.signal });
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
      // a request gone before its body was read: refused at once, its source released
      const source = chunked(Buffer.alloc(1000));
      await expect(store.receive(source, { maxBytes: 1e9, destination, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      expect(source.destroyed).toBe(true);
    }
    expect(await fixture.names()).toEqual(before);
  });

  it('a discarded upload leaves nothing', async () => {
    const before = await fixture.names();
    for (const destination of [undefined, store.pathFor('discarded')]) {
      const staged = await store.receive(chunked(randomBytes(70_000)), { maxBytes: 1e6, destination });
      await staged.discard();
      await expect(staged.commit(store.pathFor('discarded'))).rejects.toThrow(/discarded/);
    }
    expect(await fixture.names()).toEqual(before);
  });

  it('sends a stored file whole or a range of it, byte for byte', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const storagePath = await put('ranged', data);
    expect((await get(storagePath, 0, data.length - 1)).bytes.equals(data)).toBe(true);
    expect((await get(storagePath, 1_048_570, 2_097_160)).bytes.equals(data.subarray(1_048_570, 2_097_161))).toBe(true);
    expect((await get(storagePath, data.length - 1, data.length - 1)).bytes.equals(data.subarray(-1))).toBe(true);
    const empty = await put('empty', Buffer.alloc(0));
    expect(await get(empty, 0, -1)).toMatchObject({ status: 200, bytes: Buffer.alloc(0) });
  });

  it('refuses to open a missing file or one whose size differs from its row (before any header)', async () => {
    const storagePath = await put('digits', Buffer.from('0123456789'));
    expect((await get(store.pathFor('missing'), 0, 9, 10)).status).toBe(503);
    const short = await get(storagePath, 0, 9, 11);
    expect(short.status).toBe(503);
    expect(short.bytes.toString()).toContain('10 bytes where 11 were stored');
    await expect(store.withLocalFile(store.pathFor('missing'), async () => 'read')).rejects.toBeInstanceOf(StoredFileUnavailableError);
  });

  it('copies, tells what exists, removes (a missing file is not an error)', async () => {
    const from = await put('copy-from', Buffer.from('copied bytes'));
    const to = store.pathFor('copy-to');
    await store.copy(from, to);
    await store.remove(from);
    expect(await store.exists(from)).toBe(false);
    expect(await store.exists(to)).toBe(true);
    expect((await readStored(store, to, 12)).toString()).toBe('copied bytes');
    await store.remove(to);
    await store.remove(to);
    await expect(store.copy(store.pathFor('nope'), store.pathFor('dst'))).rejects.toBeInstanceOf(StoredFileUnavailableError);
    expect(await store.exists(store.pathFor('dst'))).toBe(false);
    expect(await temporary()).toEqual([]);
  });

  it('hands a renderer a local file with the bytes, gone afterwards', async () => {
    const storagePath = await put('local', Buffer.from('render me'));
    let local = '';
    const read = await store.withLocalFile(storagePath, async (file) => {
      local = file;
      return fsp.readFile(file, 'utf8');
    });
    expect(read).toBe('render me');
    if (kind === 's3') await expect(fsp.access(local)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await fsp.stat(store.scratchDirectory())).isDirectory()).toBe(true);
  });

  it('lists committed files (not temporaries) for the sweep of files no row names, and sweeps temporaries', async () => {
    const storagePath = await put('listed', Buffer.from('listed'));
    const leftover = await store.receive(chunked(randomBytes(70_000)), { maxBytes: 1e6 }); // neither committed nor discarded: a crash
    const listed: string[] = [];
    for await (const batch of store.committedFiles(-60_000, 2)) {
      expect(batch.length).toBeLessThanOrEqual(2);
      listed.push(...batch);
    }
    expect(listed.sort()).toEqual(await committed());
    expect(listed).toContain(storagePath);
    const young: string[] = [];
    for await (const batch of store.committedFiles(3_600_000)) young.push(...batch);
    expect(young).not.toContain(storagePath);
    expect(await store.sweepTemporary({ olderThanMs: 3_600_000 })).toBe(0);
    expect(await temporary()).not.toEqual([]);
    expect(await store.sweepTemporary({ olderThanMs: -60_000 })).toBeGreaterThanOrEqual(1);
    expect(await temporary()).toEqual([]);
    await expect(leftover.commit(store.pathFor('too-late'))).rejects.toThrow();
  });

  it('checks it is writable (the connection check), leaving no probe', async () => {
    expect(await store.checkWritable()).toMatchObject({ ok: true, message: expect.stringContaining('writable') });
    expect(await temporary()).toEqual([]);
  });

  // 240 probes, each a write and a removal: seconds on an idle machine, far more on S3 (s3rver) under a loaded CI
  it('answers many connection checks at once (several processes probing one store), each writable, leaving no probe', { timeout: 120_000 }, async () => {
    const rounds = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const answers = [];
        for (let n = 0; n < 40; n++) answers.push(await store.checkWritable());
        return answers;
      }),
    );
    expect(rounds.flat().filter((answer) => !answer.ok)).toEqual([]);
    expect(await temporary()).toEqual([]);
  });

  it('names files by ids only', async () => {
    for (const id of ['', '../x', 'a/b', '.tmp', 'x'.repeat(201)]) expect(() => store.pathFor(id)).toThrow(InvalidStoragePathError);
    for (const storagePath of ['../etc/passwd', '/abs', '.tmp/x', 'a//b']) await expect(store.exists(storagePath)).rejects.toThrow(InvalidStoragePathError);
  });
});

describe('s3 store', () => {
  // one S3 peer for the cases below
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3();
  });
  afterAll(() => s3.stop());

  describe('a bucket that cannot be used', () => {
    it('is a clear startup error naming the bucket', async () => {
      const missing = new S3Store(s3.client, 'no-such-bucket-here');
      await expect(missing.init()).rejects.toThrow(S3StoreUnavailableError);
      await expect(missing.init()).rejects.toThrow(/S3 bucket 'no-such-bucket-here' cannot be used/);
      const unreachable = new S3Store(createS3Client({ ...s3.settings, endpoint: 'http://127.0.0.1:9' }), s3.bucket);
      await expect(unreachable.init()).rejects.toThrow(/cannot be used/);
      expect(await missing.checkWritable()).toMatchObject({ ok: false, message: expect.stringContaining('s3://no-such-bucket-here is not writable') });
    });
  });

  describe("this process's scratch folder in the OS temp folder", () => {
    const scratchFolders = async (bucket: string) => (await fsp.readdir(os.tmpdir())).filter((name) => name.startsWith(`crs-s3-${bucket}-`)).sort();

    it('is made by init and removed by close, with what is left in it', async () => {
      const store = new S3Store(s3.client, s3.bucket);
      await store.init();
      const scratch = store.scratchDirectory();
      expect(path.dirname(scratch)).toBe(os.tmpdir());
      await fsp.mkdir(path.join(scratch, 'render-1-1'));
      await fsp.writeFile(path.join(scratch, 'render-1-1', 'page-1.png'), 'left by a conversion');
      expect(await scratchFolders(s3.bucket)).toEqual([path.basename(scratch)]);
      await store.close();
      expect(await scratchFolders(s3.bucket)).toEqual([]);
      await store.close(); // once more: nothing to do
    });

    it("init removes the folders of its kind whose process is gone (a crash's), and keeps those of processes alive", async () => {
      const first = new S3Store(s3.client, s3.bucket);
      await first.init();
      const own = path.basename(first.scratchDirectory());
      // named as the folder of a process that ran and ended, and as that of one that runs (our parent)
      const ended = spawnSync(process.execPath, ['-e', '']).pid!;
      const named = (pid: number) => path.join(os.tmpdir(), own.replace(`-${process.pid}-`, `-${pid}-`));
      await fsp.mkdir(named(ended));
      await fsp.writeFile(path.join(named(ended), 'local-abc'), 'a scratch copy the crash left');
      await fsp.mkdir(named(process.ppid));
      // another bucket's are another kind: left alone
      const otherBucket = path.join(os.tmpdir(), own.replace(`crs-s3-${s3.bucket}-`, `crs-s3-${s3.bucket}-x-`).replace(`-${process.pid}-`, `-${ended}-`));
      await fsp.mkdir(otherBucket);
      const second = new S3Store(s3.client, s3.bucket);
      await second.init();
      const left = await scratchFolders(s3.bucket);
      expect(left).toContain(own);
      expect(left).toContain(path.basename(second.scratchDirectory()));
      expect(left).toContain(path.basename(named(process.ppid)));
      expect(left).toContain(path.basename(otherBucket));
      expect(left).not.toContain(path.basename(named(ended)));
      await Promise.all([first.close(), second.close(), fsp.rm(named(process.ppid), { recursive: true }), fsp.rm(otherBucket, { recursive: true })]);
      expect(await scratchFolders(s3.bucket)).toEqual([]);
    });
  });

  describe('S3 failing mid-way', () => {
    it('a part refused after others were stored leaves no object and no multipart upload; the next uploads (two at once) arrive whole', async () => {
      // the S3 client is not the project's: a middleware stands for S3 refusing the third part
      // and the multipart uploads started and the aborts asked for are noted (s3rver does not list them)
      const client = createS3Client(s3.settings);
      const started: string[] = [];
      const aborted: string[] = [];
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as { PartNumber?: number; UploadId?: string };
          if (context.commandName === 'UploadPartCommand' && input.PartNumber === 3) throw new Error('S3 refused part 3');
          // asked, not answered: s3rver refuses AbortMultipartUpload (MethodNotAllowed); S3 does it
          if (context.commandName === 'AbortMultipartUploadCommand') aborted.push(input.UploadId!);
          const answer = await next(args);
          if (context.commandName === 'CreateMultipartUploadCommand') started.push((answer.output as { UploadId: string }).UploadId);
          return answer;
        },
        { step: 'initialize', name: 'refuseThirdPart' },
      );
      const failing = new S3Store(client, s3.bucket);
      const store = new S3Store(s3.client, s3.bucket);
      const before = await s3.keys(s3.bucket);
      for (const destination of [undefined, failing.pathFor('refused-part')]) {
        await expect(failing.receive(chunked(randomBytes(23 * 1024 * 1024)), { maxBytes: 1e9, destination })).rejects.toThrow('S3 refused part 3');
      }
      expect(await s3.keys(s3.bucket)).toEqual(before);
      expect(started).toHaveLength(2);
      expect(aborted).toEqual(started);
      client.destroy();

      // part buffers are used again: each upload must still get its own bytes only
      const datas = [randomBytes(17 * 1024 * 1024 + 11), randomBytes(12 * 1024 * 1024 + 7)];
      const paths = await Promise.all(
        datas.map(async (data, i) => {
          const storagePath = store.pathFor(`after-refused-${i}`);
          const staged = await store.receive(chunked(data), { maxBytes: data.length, destination: storagePath });
          expect({ size: staged.size, md5: staged.md5 }).toEqual({ size: data.length, md5: md5(data) });
          await staged.commit(storagePath);
          return storagePath;
        }),
      );
      for (const [i, storagePath] of paths.entries()) expect(md5(await readStored(store, storagePath, datas[i]!.length))).toBe(md5(datas[i]!));
    });
  });
});
