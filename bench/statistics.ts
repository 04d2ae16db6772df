/**
 * Repository statistics at scale (issue 10 item 6): seeds STATISTICS_ROWS (else SEARCH_ROWS, default
 * 1,000,000) contents by bulk SQL (bench/seed.ts, shared with the search benchmark), then prints the
 * p50 / p95 of `GET A/repository/statistics` through REST and a last line
 * `statistics: p95 <N> ms at <rows> contents (targets: MET)` or `(targets: MISSED: …)`; target p95 < 500 ms.
 *
 *   npm run bench -- statistics      knobs: STATISTICS_ROWS, STATISTICS_SAMPLES (20), STATISTICS_WARMUP (2)
 */
import 'reflect-metadata';
import { fmt, header, runBench, targetsLine } from './lib.js';
import { REPOSITORY_ID, startSeededService, seededFolders } from './seed.js';

const ROWS = Number(process.env.STATISTICS_ROWS ?? process.env.SEARCH_ROWS ?? 1_000_000);
const SAMPLES = Number(process.env.STATISTICS_SAMPLES ?? 20);
const WARMUP = Number(process.env.STATISTICS_WARMUP ?? 2);
const TARGET_MS = 500;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`statistics: ${ROWS.toLocaleString('en')} contents, GET A/repository/statistics through REST`);
  const { service, session } = await startSeededService('statistics', ROWS, cleanup);
  const url = `${service.baseUrl}/api/v1/access.svc.admin/v1/repository/statistics?${new URLSearchParams({ sessionId: session, repositoryId: REPOSITORY_ID })}`;

  const latencies: number[] = [];
  for (let n = 0; n < WARMUP + SAMPLES; n++) {
    const started = performance.now();
    const response = await fetch(url);
    const body = (await response.json()) as { contentStatistics?: { numberOfContents: number; numberOfFolders: number } };
    const ms = performance.now() - started;
    if (response.status !== 200 || body.contentStatistics?.numberOfContents !== ROWS || body.contentStatistics.numberOfFolders !== seededFolders(ROWS)) {
      throw new Error(`expected 200 with ${ROWS} contents, got ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    }
    if (n >= WARMUP) latencies.push(ms);
  }
  latencies.sort((a, b) => a - b);
  const p95 = percentile(latencies, 95);
  console.log(`p50 ${fmt(percentile(latencies, 50))} ms  p95 ${fmt(p95)} ms  (${SAMPLES} samples)`);
  console.log(targetsLine('statistics', `p95 ${fmt(p95, 0)} ms at ${ROWS} contents`, p95 < TARGET_MS ? [] : [`p95 < ${TARGET_MS} ms`]));
}

await runBench(main);
