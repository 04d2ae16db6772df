/**
 * Small-file ingestion (issue #3): 4 KiB contents created through REST (POST C/content, multipart,
 * distinct names, one folder) by 8 concurrent clients for ~10 s, in contents/second, against the
 * target ≥ 600/s (issue 27 item 3; issue #3 asked 300/s); peer: 4 KiB files written with writeFile + fsync by 8 concurrent writers on the
 * same disk (the file store also makes every file durable before answering). The service runs as a
 * child process (`node --expose-gc dist/app/main.js`), so the load generator does not share its event loop.
 * Every answer must be a 201 with the content's id; any other answer fails the benchmark.
 *
 *   npm run build && node dist/bench/ingest.js
 *   knobs: INGEST_SECONDS (10), INGEST_WARMUP_SECONDS (2), INGEST_CONCURRENCY (8), INGEST_PEER_SECONDS (5)
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import {
  contentBase,
  cpuSecondsOf,
  cpuTimesOf,
  createFolder,
  fmt,
  header,
  login,
  makeTempDir,
  multipartFrame,
  processTree,
  ratio,
  removeDir,
  runBench,
  startServiceChild,
  targetsLine,
  verdict,
} from './lib.js';

const SECONDS = Number(process.env.INGEST_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.INGEST_WARMUP_SECONDS ?? 2);
const CONCURRENCY = Number(process.env.INGEST_CONCURRENCY ?? 8);
const PEER_SECONDS = Number(process.env.INGEST_PEER_SECONDS ?? 5);
const FILE_BYTES = 4096;
const TARGET = 600;
/** a hard bound on requests per phase, whatever the speed */
const MAX_PER_PHASE = 100_000;

interface Phase {
  done: number;
  latencies: number[];
  seconds: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `CONCURRENCY` loops of `one(worker, n)` until `seconds` have passed; any failure stops all of them. */
async function drive(seconds: number, one: (worker: number, n: number) => Promise<void>): Promise<Phase> {
  const latencies: number[] = [];
  let done = 0;
  let failure: unknown;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let n = 0; performance.now() < until && failure === undefined && done < MAX_PER_PHASE; n++) {
        const start = performance.now();
        try {
          await one(worker, n);
        } catch (error) {
          failure ??= error;
          return;
        }
        latencies.push(performance.now() - start);
        done++;
      }
    }),
  );
  if (failure !== undefined) throw failure;
  return { done, latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - t0) / 1000 };
}

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`ingest: ${FILE_BYTES / 1024} KiB contents through REST, ${CONCURRENCY} concurrent clients`);
  const tmp = makeTempDir('ingest');
  cleanup(() => removeDir(tmp));
  const dataDir = path.join(tmp, 'data');
  const peerDir = path.join(tmp, 'peer');
  await fs.mkdir(dataDir, { mode: 0o755 });
  await fs.mkdir(peerDir);

  const service = await startServiceChild(dataDir);
  cleanup(() => service.stop());
  const session = await login(service.baseUrl);
  const folderId = await createFolder(service.baseUrl, session, 'ingest-bench');
  const url = new URL(`${contentBase(service.baseUrl)}/content?sessionId=${session}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  cleanup(() => agent.destroy());
  console.log(`service pid ${service.pid} at ${service.baseUrl}`);

  const post = (name: string) =>
    new Promise<void>((resolve, reject) => {
      const frame = multipartFrame({ name, parentId: folderId }, name);
      const body = Buffer.concat([frame.head, randomBytes(FILE_BYTES), frame.tail]);
      const request = http.request(url, {
        method: 'POST',
        agent,
        headers: { 'content-type': frame.contentType, 'content-length': String(body.length) },
      });
      request.once('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.once('end', () => {
          if (response.statusCode === 201 && text.includes('"id"') && text.includes(name)) resolve();
          else reject(new Error(`POST content '${name}' answered ${response.statusCode}: ${text.slice(0, 500)}`));
        });
        response.once('error', reject);
      });
      request.once('error', reject);
      request.end(body);
    });

  await drive(WARMUP_SECONDS, (w, n) => post(`warm-${w}-${n}.bin`));
  const cpu = () => {
    const [self, ...descendants] = processTree(service.pid);
    return { node: cpuSecondsOf(self!), nodeSystem: cpuTimesOf(self!).system, pg: descendants.reduce((s, p) => s + cpuSecondsOf(p), 0) };
  };
  const cpu0 = cpu();
  const client0 = process.cpuUsage();
  const rest = await drive(SECONDS, (w, n) => post(`file-${w}-${n}.bin`));
  const client = process.cpuUsage(client0);
  const cpu1 = cpu();
  const restRate = rest.done / rest.seconds;
  const nodeMs = ((cpu1.node - cpu0.node) * 1000) / rest.done;
  const pgMs = ((cpu1.pg - cpu0.pg) * 1000) / rest.done;
  const nodeSystemMs = ((cpu1.nodeSystem - cpu0.nodeSystem) * 1000) / rest.done;
  const clientMs = (client.user + client.system) / 1000 / rest.done;
  console.log(
    `REST ingest: ${rest.done} contents in ${fmt(rest.seconds)} s = ${fmt(restRate)} contents/s; latency p50 ${fmt(percentile(rest.latencies, 50))} ms, ` +
      `p99 ${fmt(percentile(rest.latencies, 99))} ms; CPU per content: node ${fmt(nodeMs, 2)} ms (of it kernel ${fmt(nodeSystemMs, 2)}) + postgres ${fmt(pgMs, 2)} ms, load generator ${fmt(clientMs, 2)} ms; all 201`,
  );

  const content = randomBytes(FILE_BYTES);
  const peer = await drive(PEER_SECONDS, async (w, n) => {
    const handle = await fs.open(path.join(peerDir, `f-${w}-${n}.bin`), 'w');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
  const peerRate = peer.done / peer.seconds;
  console.log(`fs peer: ${peer.done} files in ${fmt(peer.seconds)} s = ${fmt(peerRate)} files/s (writeFile + fsync, p50 ${fmt(percentile(peer.latencies, 50), 2)} ms)`);
  console.log('');
  console.log(`REST ${fmt(restRate)} contents/s vs target ${TARGET}/s: ${verdict(restRate >= TARGET)} (${fmt(ratio(restRate, TARGET), 2)} of the target)`);
  console.log(`ratio REST / fs peer = ${fmt(ratio(restRate, peerRate), 3)}`);
  console.log(targetsLine('ingest', `${fmt(restRate)} contents/s, ${fmt(ratio(restRate, peerRate), 3)}× fs peer`, restRate >= TARGET ? [] : [`${TARGET} contents/s`]));
}

await runBench(main);
