import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore } from './file-store.js';
import { StoredFileUnavailableError } from './store.js';

let dir: string;
let server: http.Server;
let base: string;
const big = Buffer.alloc(3 * 1024 * 1024 + 17);
for (let i = 0; i < big.length; i++) big[i] = i % 251;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'send-file-'));
  await fsp.writeFile(path.join(dir, 'digits'), '0123456789');
  await fsp.writeFile(path.join(dir, 'big'), big);
  // GET /<file>?start=&end=&size= sends that range of the file
  server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    try {
      const file = await new FileStore(dir).open(url.pathname.slice(1), Number(url.searchParams.get('size')));
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
  await fsp.rm(dir, { recursive: true, force: true });
});

const get = async (file: string, start: number, end: number, size: number) => {
  const response = await fetch(`${base}/${file}?start=${start}&end=${end}&size=${size}`);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
};

describe('sendFile', () => {
  it('sends the whole file or an inclusive range', async () => {
    expect((await get('digits', 0, 9, 10)).bytes.toString()).toBe('0123456789');
    expect((await get('digits', 2, 4, 10)).bytes.toString()).toBe('234');
    expect((await get('digits', 9, 9, 10)).bytes.toString()).toBe('9');
  });

  it('sends files of several chunks byte for byte, from any offset', async () => {
    expect((await get('big', 0, big.length - 1, big.length)).bytes.equals(big)).toBe(true);
    expect((await get('big', 1_048_570, 2_097_160, big.length)).bytes.equals(big.subarray(1_048_570, 2_097_161))).toBe(true);
  });
});

describe('FileStore.open', () => {
  it('refuses a missing file and one whose size differs from the record', async () => {
    expect(await get('missing', 0, 9, 10)).toMatchObject({ status: 503 });
    const short = await get('digits', 0, 9, 11);
    expect(short.status).toBe(503);
    expect(short.bytes.toString()).toContain('10 bytes where 11 were stored');
  });
});
