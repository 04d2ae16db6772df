/**
 * Large transfer: a 1 GiB file uploaded through REST (POST C/content, multipart, streamed from a file)
 * and downloaded again (GET C/content/{id}/download, received into one reused buffer and discarded; a second download is
 * written to a file for the md5 check), against plain fs streams
 * moving the same bytes on the same disk:
 *   write peer: copy source file → new file (pipeline of fs streams) + fsync — the service fsyncs
 *               what it stores, so the peer does too (the copy without fsync is printed as well);
 *   read peer:  read the stored file → discard.
 * Both sides use 1 MiB chunks (the file store's). A second, informative peer is a bare node:http server
 * (its own child process) that stores the same request body with fs streams + fsync and serves the
 * stored file with fs streams: the same client, loopback and HTTP costs, none of the service's work,
 * which shows how much of a gap to the fs peers is HTTP itself. Prints MiB/s, the ratios (target ≥ 0.7) and the
 * service's resident memory growth (VmRSS from /proc every 100 ms; target < 64 MiB), measured from a
 * service warmed up by a 4 MiB upload and download. The service runs
 * as a child process (`node --expose-gc dist/app/main.js`), so its RSS is its own. The downloaded bytes' md5 must
 * equal the uploaded file's (hashed after the timed download), and the md5 the service reports.
 *
 * The S3 case (DESIGN §14): the same file up and down through a service whose bytes are in S3 (s3rver
 * in a child process over a temporary folder, or the S3 of S3_ENDPOINT: test/helpers/s3.ts), against
 * the AWS SDK moving the same bytes to the same S3 directly (lib-storage Upload with the service's part
 * size and queue; GetObject → discard). Same targets: ratio ≥ 0.7 each way, service RSS growth < 64 MiB.
 *
 *   npm run build && node dist/bench/transfer.js
 *   knobs: TRANSFER_MIB (1024), TRANSFER_ROUNDS (2), TRANSFER_S3 (true; false skips the S3 case), TRANSFER_FS (true;
 *   false skips the file-system case)
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { fork } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createS3Client, MULTIPART_UPLOAD } from '../src/storage/s3-store.js';
import { startTestS3 } from '../test/helpers/s3.js';
import {
  contentBase,
  cpuTimesOf,
  createFolder,
  fmt,
  header,
  login,
  makeTempDir,
  MiB,
  multipartFrame,
  ratio,
  removeDir,
  rssOf,
  RssSampler,
  runBench,
  startServiceChild,
  targetsLine,
  verdict,
} from './lib.js';

const SIZE_MIB = Number(process.env.TRANSFER_MIB ?? 1024);
const ROUNDS = Number(process.env.TRANSFER_ROUNDS ?? 2);
const RATIO_TARGET = 0.7;
const RSS_TARGET_MIB = 64;
const CHUNK = MiB;

/** Writes `mib` MiB of random-looking bytes (a random block, each MiB stamped with its index), fsynced; returns the md5. */
async function generate(file: string, mib: number): Promise<string> {
  const block = randomBytes(MiB);
  const hash = createHash('md5');
  async function* blocks() {
    for (let i = 0; i < mib; i++) {
      const chunk = Buffer.from(block);
      chunk.writeUInt32BE(i, 0);
      chunk.writeUInt32BE(i ^ 0x5bd1e995, MiB / 2);
      hash.update(chunk);
      yield chunk;
    }
  }
  await pipeline(Readable.from(blocks()), createWriteStream(file));
  await fsync(file);
  return hash.digest('hex');
}

async function fsync(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const discard = () => new Writable({ highWaterMark: CHUNK, write: (_chunk, _encoding, callback) => callback() });

async function timed<T>(run: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const t0 = performance.now();
  const value = await run();
  return { seconds: (performance.now() - t0) / 1000, value };
}

interface Uploaded {
  id: string;
  md5?: string;
  fileSize?: number;
}

/**
 * The bare-HTTP peer (this file with argument `plain-http`): POST /store?path=… writes the request body
 * to that file and fsyncs it; GET /read?path=… streams that file. Loopback only; ends with its parent.
 */
async function plainHttpServer(): Promise<void> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const file = url.searchParams.get('path') ?? '';
    const fail = (error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    };
    if (req.method === 'POST' && url.pathname === '/store') {
      pipeline(req, createWriteStream(file, { highWaterMark: CHUNK }))
        .then(() => fsync(file))
        .then(() => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'), fail);
    } else if (req.method === 'GET' && url.pathname === '/read') {
      fs.stat(file).then((stat) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(stat.size) });
        return pipeline(createReadStream(file, { highWaterMark: CHUNK }), res);
      }).catch(fail);
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
  process.on('disconnect', () => process.exit(0));
}

/** POST C/content with the file streamed as the `file` part (Content-Length known, not chunked). */
async function upload(url: string, file: string, name: string, parentId: string): Promise<Uploaded> {
  const size = (await fs.stat(file)).size;
  const frame = multipartFrame({ name, parentId }, name);
  const request = http.request(url, {
    method: 'POST',
    headers: { 'content-type': frame.contentType, 'content-length': String(frame.head.length + size + frame.tail.length) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.once('error', reject);
    });
    request.once('error', reject);
  });
  async function* parts() {
    yield frame.head;
    yield* createReadStream(file, { highWaterMark: CHUNK });
    yield frame.tail;
  }
  // an early error answer ends the request body: report the answer, not the broken pipe
  const sent = pipeline(Readable.from(parts()), request).catch((error: unknown) => error);
  const { status, body } = await answer;
  const sendError = await sent;
  if (status !== 201) throw new Error(`upload answered ${status}: ${body.slice(0, 500)}`);
  if (sendError) throw sendError;
  const entry = JSON.parse(body) as { id: string; resource?: { md5?: string; fileSize?: number } };
  if (url.includes('/store?')) return { id: '' };
  return { id: entry.id, md5: entry.resource?.md5, fileSize: entry.resource?.fileSize };
}

async function get(url: string): Promise<http.IncomingMessage> {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, resolve).once('error', reject));
  if (response.statusCode !== 200) {
    response.resume();
    throw new Error(`download answered ${response.statusCode}`);
  }
  return response;
}

/** GET …/download streamed to `file`: the copy whose md5 is checked (untimed). */
async function download(url: string, file: string): Promise<void> {
  await pipeline(await get(url), createWriteStream(file, { highWaterMark: CHUNK }));
}

/**
 * GET …/download, read and discarded like its peer (read → discard); answers the bytes received.
 * The client reads the socket into one reused 1 MiB buffer (`onread`), as curl does: node:http's
 * client allocates a buffer per chunk and its JavaScript loop, not the server, was the limit
 * (≈ 1.6 GB/s against ≈ 3 GB/s with curl for the same service).
 */
function downloadDiscarding(url: string): Promise<number> {
  const target = new URL(url);
  return new Promise<number>((resolve, reject) => {
    let head = '';
    let length = -1;
    let received = 0;
    const socket = net.connect({
      host: target.hostname,
      port: Number(target.port),
      onread: {
        buffer: Buffer.allocUnsafe(CHUNK),
        callback: (bytes: number, buffer: Uint8Array) => {
          if (length < 0) {
            head += Buffer.from(buffer.buffer, buffer.byteOffset, bytes).toString('latin1');
            const end = head.indexOf('\r\n\r\n');
            if (end < 0) return true;
            const headers = head.slice(0, end);
            const declared = /\r\ncontent-length: *(\d+)/i.exec(headers);
            if (!headers.startsWith('HTTP/1.1 200 ') || !declared) {
              socket.destroy();
              reject(new Error(`download answered ${headers.slice(0, headers.indexOf('\r\n'))}`));
              return false;
            }
            length = Number(declared[1]);
            received = head.length - (end + 4);
          } else {
            received += bytes;
          }
          if (received >= length) {
            socket.destroy();
            resolve(received);
          }
          return true;
        },
      },
    });
    socket.once('connect', () => socket.write(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`));
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed after ${received} of ${length} bytes`)));
  });
}

async function md5Of(file: string): Promise<{ md5: string; bytes: number }> {
  const hash = createHash('md5');
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { md5: hash.digest('hex'), bytes };
}

/** The newest file of `size` bytes under `dir` (the stored bytes of the last upload). */
async function storedFile(dir: string, size: number): Promise<string> {
  let best = { file: '', mtime: -1 };
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const stat = await fs.stat(file);
    if (stat.size === size && stat.mtimeMs > best.mtime) best = { file, mtime: stat.mtimeMs };
  }
  if (!best.file) throw new Error(`no stored file of ${size} bytes under ${dir}`);
  return best.file;
}

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`transfer: ${SIZE_MIB} MiB through REST vs plain fs streams on the same disk`);
  const tmp = makeTempDir('transfer');
  cleanup(() => removeDir(tmp));
  const dataDir = path.join(tmp, 'data');
  const work = path.join(tmp, 'work');
  await fs.mkdir(dataDir, { mode: 0o755 });
  await fs.mkdir(work);

  const source = path.join(work, 'source.bin');
  const generated = await timed(() => generate(source, SIZE_MIB));
  const sourceMd5 = generated.value;
  console.log(`generated ${SIZE_MIB} MiB in ${fmt(generated.seconds)} s, md5 ${sourceMd5}; temp dir ${tmp}`);

  const fsCaseResult = process.env.TRANSFER_FS === 'false' ? { figures: 'file system case skipped', missed: [] } : await fsCase(dataDir, work, source, sourceMd5, cleanup);
  let figures = fsCaseResult.figures;
  const missed = [...fsCaseResult.missed];
  if (process.env.TRANSFER_S3 !== 'false') {
    const s3 = await s3Case(tmp, work, source, sourceMd5, cleanup);
    figures += `; S3: ${s3.figures}`;
    missed.push(...s3.missed.map((target) => `S3 ${target}`));
  }
  // one last line for both cases (bench/run-all.ts reads it)
  console.log(targetsLine('transfer', figures, missed));
}

/** The file through a service on the file system, against fs streams and a bare node:http server. */
async function fsCase(dataDir: string, work: string, source: string, sourceMd5: string, cleanup: (fn: () => Promise<void> | void) => void): Promise<{ figures: string; missed: string[] }> {
  const service = await startServiceChild(dataDir);
  cleanup(() => service.stop());
  // what the service logged (warnings and errors) explains a failed transfer
  cleanup(() => {
    const logged = service.output().trim();
    if (logged) console.log(`service log (last 4000 characters):\n${logged.slice(-4000)}`);
  });
  const session = await login(service.baseUrl);
  const C = contentBase(service.baseUrl);
  const folderId = await createFolder(service.baseUrl, session, 'transfer-bench');
  console.log(`service pid ${service.pid} at ${service.baseUrl}`);
  const plain = fork(fileURLToPath(import.meta.url), ['plain-http'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup(() => {
    if (plain.exitCode === null && plain.signalCode === null) plain.kill('SIGTERM');
  });
  const plainPort = await new Promise<number>((resolve, reject) => {
    plain.once('message', (port) => resolve(port as number));
    plain.once('exit', (code) => reject(new Error(`the plain http server exited (${code})`)));
  });
  const plainBase = `http://127.0.0.1:${plainPort}`;

  // warm-up: a small file up and down, so that first-use costs (module loading, JIT) are not counted
  const small = path.join(work, 'small.bin');
  const smallMd5 = await generate(small, 4);
  const warm = await upload(`${C}/content?sessionId=${session}`, small, 'warm-up.bin', folderId);
  await download(`${C}/content/${warm.id}/download?sessionId=${session}`, path.join(work, 'small.down'));
  if ((await md5Of(path.join(work, 'small.down'))).md5 !== smallMd5) throw new Error('warm-up download md5 differs');

  const sampler = new RssSampler(service.pid, 100);
  cleanup(() => sampler.stop());
  const mibps = (seconds: number) => SIZE_MIB / seconds;
  const rows: { plainUp: number; plainDown: number; plainUpRss: number; plainDownRss: number; copy: number; copyNoSync: number; up: number; down: number; read: number; upRss: number; upAnon: number; afterUp: number; downRss: number; downAnon: number; rss0: number }[] = [];

  for (let round = 1; round <= ROUNDS; round++) {
    // write peer: the same bytes copied file → file, then fsynced
    const copy = path.join(work, 'copy.bin');
    const t0 = performance.now();
    await pipeline(createReadStream(source, { highWaterMark: CHUNK }), createWriteStream(copy, { highWaterMark: CHUNK }));
    const t1 = performance.now();
    await fsync(copy);
    const copied = { seconds: (performance.now() - t0) / 1000, noSyncSeconds: (t1 - t0) / 1000 };
    await fs.rm(copy);

    sampler.reset();
    const rss0 = sampler.baseline;
    const up = await timed(() => upload(`${C}/content?sessionId=${session}`, source, `big-${round}.bin`, folderId));
    const upRss = sampler.growth;
    const upAnon = sampler.anonGrowth;
    const afterUp = rssOf(service.pid);
    if (up.value.md5 !== sourceMd5) throw new Error(`the service's md5 ${up.value.md5} differs from the file's ${sourceMd5}`);
    if (up.value.fileSize !== SIZE_MIB * MiB) throw new Error(`the service stored ${up.value.fileSize} bytes`);

    sampler.reset();
    const target = path.join(work, 'download.bin');
    const downloadUrl = `${C}/content/${up.value.id}/download?sessionId=${session}`;
    // timed as its peer is: the bytes are received and discarded (a client writing them to disk
    // would measure its own disk); the copy checked below is downloaded apart
    const down = await timed(() => downloadDiscarding(downloadUrl));
    const downRss = sampler.growth;
    const downAnon = sampler.anonGrowth;
    if (down.value !== SIZE_MIB * MiB) throw new Error(`downloaded ${down.value} bytes`);
    await download(downloadUrl, target);
    const arrived = await md5Of(target);
    if (arrived.md5 !== sourceMd5 || arrived.bytes !== SIZE_MIB * MiB) {
      throw new Error(`downloaded ${arrived.bytes} bytes with md5 ${arrived.md5}, uploaded md5 ${sourceMd5}`);
    }

    // read peer: the stored file itself, read and discarded
    const stored = await storedFile(path.join(dataDir, 'storage'), SIZE_MIB * MiB);
    const read = await timed(() => pipeline(createReadStream(stored, { highWaterMark: CHUNK }), discard()));

    // bare-HTTP peer: the same client, the same bytes, a node:http server that only moves them
    const plainStored = path.join(work, 'plain-stored.bin');
    const plainSampler = new RssSampler(plain.pid!, 100);
    const plainUp = await timed(() => upload(`${plainBase}/store?path=${encodeURIComponent(plainStored)}`, source, `plain-${round}.bin`, folderId));
    const plainUpRss = plainSampler.growth;
    await fs.rm(plainStored);
    plainSampler.reset();
    const plainUrl = `${plainBase}/read?path=${encodeURIComponent(stored)}`;
    const plainDown = await timed(() => downloadDiscarding(plainUrl));
    const plainDownRss = plainSampler.growth;
    plainSampler.stop();
    await download(plainUrl, target);
    if ((await md5Of(target)).md5 !== sourceMd5) throw new Error('the bare-HTTP download differs');
    await fs.rm(target);

    const row = {
      plainUp: mibps(plainUp.seconds),
      plainDown: mibps(plainDown.seconds),
      plainUpRss: plainUpRss / MiB,
      plainDownRss: plainDownRss / MiB,
      copy: mibps(copied.seconds),
      copyNoSync: mibps(copied.noSyncSeconds),
      up: mibps(up.seconds),
      down: mibps(down.seconds),
      read: mibps(read.seconds),
      upRss: upRss / MiB,
      upAnon: upAnon / MiB,
      afterUp: afterUp / MiB,
      downAnon: downAnon / MiB,
      downRss: downRss / MiB,
      rss0: rss0 / MiB,
    };
    rows.push(row);
    console.log(
      `round ${round}: upload ${fmt(row.up)} MiB/s vs copy+fsync ${fmt(row.copy)} MiB/s (copy alone ${fmt(row.copyNoSync)}); download ${fmt(row.down)} MiB/s vs read ${fmt(row.read)} MiB/s; ` +
        `service VmRSS ${fmt(row.rss0, 0)} MiB before, peak +${fmt(row.upRss)} MiB (anon +${fmt(row.upAnon)}) during upload, ${fmt(row.afterUp, 0)} MiB after it, ` +
        `peak +${fmt(row.downRss)} MiB (anon +${fmt(row.downAnon)}) during download; md5 ok; ` +
        `bare node:http: upload ${fmt(row.plainUp)} MiB/s (RSS +${fmt(row.plainUpRss)} MiB), download ${fmt(row.plainDown)} MiB/s (RSS +${fmt(row.plainDownRss)} MiB)`,
    );
  }

  const mean = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + pick(r), 0) / rows.length;
  const max = (pick: (r: (typeof rows)[number]) => number) => Math.max(...rows.map(pick));
  const up = mean((r) => r.up);
  const copy = mean((r) => r.copy);
  const down = mean((r) => r.down);
  const read = mean((r) => r.read);
  const rssGrowth = Math.max(max((r) => r.upRss), max((r) => r.downRss));
  console.log('');
  console.log(`mean of ${rows.length} round(s), ${SIZE_MIB} MiB each:`);
  console.log(`  upload   ${fmt(up)} MiB/s   write peer (copy + fsync) ${fmt(copy)} MiB/s   ratio ${fmt(ratio(up, copy), 2)} (target >= ${RATIO_TARGET}: ${verdict(ratio(up, copy) >= RATIO_TARGET)})`);
  console.log(`  download ${fmt(down)} MiB/s   read peer (read → discard) ${fmt(read)} MiB/s   ratio ${fmt(ratio(down, read), 2)} (target >= ${RATIO_TARGET}: ${verdict(ratio(down, read) >= RATIO_TARGET)})`);
  const plainUp = mean((r) => r.plainUp);
  const plainDown = mean((r) => r.plainDown);
  console.log(`  informative, against a bare node:http server moving the same bytes (same client): upload ${fmt(plainUp)} MiB/s, ratio ${fmt(ratio(up, plainUp), 2)}; download ${fmt(plainDown)} MiB/s, ratio ${fmt(ratio(down, plainDown), 2)}`);
  console.log(`  service RSS growth, largest: ${fmt(rssGrowth)} MiB (target < ${RSS_TARGET_MIB} MiB: ${verdict(rssGrowth < RSS_TARGET_MIB)})`);
  console.log(`  md5 of every download = md5 of the uploaded file (${sourceMd5})`);
  const missed = [
    ...(ratio(up, copy) >= RATIO_TARGET ? [] : ['upload ratio']),
    ...(ratio(down, read) >= RATIO_TARGET ? [] : ['download ratio']),
    ...(rssGrowth < RSS_TARGET_MIB ? [] : ['RSS growth']),
  ];
  return { figures: `upload ${fmt(ratio(up, copy), 2)}× write peer, download ${fmt(ratio(down, read), 2)}× read peer, RSS +${fmt(rssGrowth)} MiB`, missed };
}

/** The S3 peer (this file with argument `s3`): buckets of its own on s3rver (or S3_ENDPOINT); sends their S3_* settings; ends with its parent. */
async function s3Server(): Promise<void> {
  const s3 = await startTestS3();
  process.send!(s3.env);
  process.on('disconnect', () => void s3.stop().finally(() => process.exit(0)));
}

/** The same file through a service on S3, against the AWS SDK moving it to the same S3 directly. */
async function s3Case(tmp: string, work: string, source: string, sourceMd5: string, cleanup: (fn: () => Promise<void> | void) => void): Promise<{ figures: string; missed: string[] }> {
  header(`transfer, S3: ${SIZE_MIB} MiB through REST into S3 vs the AWS SDK to the same S3`);
  const peer = fork(fileURLToPath(import.meta.url), ['s3'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup(() => {
    if (peer.exitCode === null && peer.signalCode === null) peer.disconnect();
  });
  const env = await new Promise<Record<string, string>>((resolve, reject) => {
    peer.once('message', (message) => resolve(message as Record<string, string>));
    peer.once('exit', (code) => reject(new Error(`the S3 peer exited (${code})`)));
  });
  const client = createS3Client({ endpoint: env.S3_ENDPOINT, region: env.S3_REGION!, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY, forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true' });
  cleanup(() => client.destroy());
  const dataDir = path.join(tmp, 'data-s3');
  await fs.mkdir(dataDir, { mode: 0o755 });
  const service = await startServiceChild(dataDir, env);
  cleanup(() => service.stop());
  const session = await login(service.baseUrl);
  const C = contentBase(service.baseUrl);
  const folderId = await createFolder(service.baseUrl, session, 'transfer-s3-bench');
  const small = path.join(work, 'small-s3.bin');
  await generate(small, 4);
  const warm = await upload(`${C}/content?sessionId=${session}`, small, 'warm-up.bin', folderId);
  await download(`${C}/content/${warm.id}/download?sessionId=${session}`, path.join(work, 'small.down'));

  const sampler = new RssSampler(service.pid, 100);
  cleanup(() => sampler.stop());
  const mibps = (seconds: number) => SIZE_MIB / seconds;
  const rows: { up: number; down: number; sdkUp: number; sdkDown: number; rss: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const key = `peer/${round}.bin`;
    // the service's own part size and queue (src/storage/s3-store.ts)
    const sdkCpu = cpuMeter(service.pid, peer.pid!);
    const sdkUp = await timed(() => new Upload({ client, params: { Bucket: env.S3_BUCKET!, Key: key, Body: createReadStream(source, { highWaterMark: CHUNK }) }, ...MULTIPART_UPLOAD }).done());
    const sdkUpCpu = sdkCpu();
    const sdkDown = await timed(async () => pipeline((await client.send(new GetObjectCommand({ Bucket: env.S3_BUCKET!, Key: key }))).Body as Readable, discard()));

    sampler.reset();
    const serviceCpu = cpuMeter(service.pid, peer.pid!);
    const up = await timed(() => upload(`${C}/content?sessionId=${session}`, source, `big-s3-${round}.bin`, folderId));
    const upCpu = serviceCpu();
    const upRss = sampler.growth;
    if (up.value.md5 !== sourceMd5) throw new Error(`the service's md5 ${up.value.md5} differs from the file's ${sourceMd5}`);
    sampler.reset();
    const downloadUrl = `${C}/content/${up.value.id}/download?sessionId=${session}`;
    const down = await timed(() => downloadDiscarding(downloadUrl));
    const downRss = sampler.growth;
    if (down.value !== SIZE_MIB * MiB) throw new Error(`downloaded ${down.value} bytes`);
    const target = path.join(work, 'download-s3.bin');
    await download(downloadUrl, target);
    if ((await md5Of(target)).md5 !== sourceMd5) throw new Error('the download from S3 differs from the upload');
    await fs.rm(target);
    const row = { up: mibps(up.seconds), down: mibps(down.seconds), sdkUp: mibps(sdkUp.seconds), sdkDown: mibps(sdkDown.seconds), rss: Math.max(upRss, downRss) / MiB };
    rows.push(row);
    console.log(
      `round ${round}: upload ${fmt(row.up)} MiB/s vs SDK ${fmt(row.sdkUp)} MiB/s; download ${fmt(row.down)} MiB/s vs SDK ${fmt(row.sdkDown)} MiB/s; ` +
        `service RSS peak +${fmt(upRss / MiB)} MiB during upload, +${fmt(downRss / MiB)} MiB during download; md5 ok`,
    );
    console.log(`  CPU ms per MiB uploaded (load ${loadAverage()}): through the service ${upCpu}; SDK ${sdkUpCpu}`);
  }
  const mean = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((sum, r) => sum + pick(r), 0) / rows.length;
  const upRatio = ratio(mean((r) => r.up), mean((r) => r.sdkUp));
  const downRatio = ratio(mean((r) => r.down), mean((r) => r.sdkDown));
  const rssGrowth = Math.max(...rows.map((r) => r.rss));
  console.log(`  upload   ${fmt(mean((r) => r.up))} MiB/s   SDK ${fmt(mean((r) => r.sdkUp))} MiB/s   ratio ${fmt(upRatio, 2)} (target >= ${RATIO_TARGET}: ${verdict(upRatio >= RATIO_TARGET)})`);
  console.log(`  download ${fmt(mean((r) => r.down))} MiB/s   SDK ${fmt(mean((r) => r.sdkDown))} MiB/s   ratio ${fmt(downRatio, 2)} (target >= ${RATIO_TARGET}: ${verdict(downRatio >= RATIO_TARGET)})`);
  console.log(`  service RSS growth, largest: ${fmt(rssGrowth)} MiB (target < ${RSS_TARGET_MIB} MiB: ${verdict(rssGrowth < RSS_TARGET_MIB)})`);
  const missed = [...(upRatio >= RATIO_TARGET ? [] : ['upload ratio']), ...(downRatio >= RATIO_TARGET ? [] : ['download ratio']), ...(rssGrowth < RSS_TARGET_MIB ? [] : ['RSS growth'])];
  return { figures: `upload ${fmt(upRatio, 2)}× SDK, download ${fmt(downRatio, 2)}× SDK, RSS +${fmt(rssGrowth)} MiB`, missed };
}

/**
 * Starts counting the CPU of the service, the S3 peer and this process (the client, or the SDK); the
 * function answers it per MiB moved since, as text: `service user+system, S3 peer, this process`.
 */
function cpuMeter(servicePid: number, peerPid: number): () => string {
  const before = [cpuTimesOf(servicePid), cpuTimesOf(peerPid)];
  const self = process.cpuUsage();
  return () => {
    const [service, peer] = [cpuTimesOf(servicePid), cpuTimesOf(peerPid)].map((t, i) => ({ user: t.user - before[i]!.user, system: t.system - before[i]!.system }));
    const own = process.cpuUsage(self);
    const perMib = (seconds: number) => fmt((seconds * 1000) / SIZE_MIB, 2);
    return `service ${perMib(service!.user + service!.system)} (kernel ${perMib(service!.system)}), S3 peer ${perMib(peer!.user + peer!.system)}, bench process ${perMib((own.user + own.system) / 1e6)}`;
  };
}

const loadAverage = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'plain-http') {
  await plainHttpServer();
} else if (process.argv[2] === 's3') {
  await s3Server();
} else {
  await runBench(main);
}
