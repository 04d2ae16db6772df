/**
 * Repository statistics at scale (issue 10 item 6, issue 27 item 6): seeds STATISTICS_SMALL_ROWS
 * (100,000) and STATISTICS_ROWS (else SEARCH_ROWS, default 1,000,000) contents by bulk SQL
 * (bench/seed.ts, shared with the search benchmark), each in its own service and Postgres, then samples
 * `GET A/repository/statistics` through REST of the two in turn and prints p50 / p95 at each size and
 * the growth of p95 from the first to the second. Last line:
 * `statistics: p95 <N> ms at <rows> contents, growth <r>× from <small rows> (targets: MET)` or `(targets: MISSED: …)`;
 * targets: p95 < 50 ms at the larger size, growth ≤ 1.5 (the figures are kept incrementally: their cost
 * must not grow with the repository).
 *
 *   npm run bench -- statistics      knobs: STATISTICS_ROWS, STATISTICS_SMALL_ROWS, STATISTICS_SAMPLES (100), STATISTICS_WARMUP (3)
 */
import 'reflect-metadata';
import { fmt, header, percentile, runBench, targetsLine } from './lib.js';
import { REPOSITORY_ID, startSeededService, seededFolders } from './seed.js';

const ROWS = Number(process.env.STATISTICS_ROWS ?? process.env.SEARCH_ROWS ?? 1_000_000);
const SMALL_ROWS = Number(process.env.STATISTICS_SMALL_ROWS ?? 100_000);
const SAMPLES = Number(process.env.STATISTICS_SAMPLES ?? 100);
const WARMUP = Number(process.env.STATISTICS_WARMUP ?? 3);
const TARGET_MS = 50;
const TARGET_GROWTH = 1.5;

/** A seeded service of `rows` contents and one checked sample of its statistics (ms). */
async function seeded(rows: number, cleanup: (fn: () => Promise<void> | void) => void) {
  const { service, session } = await startSeededService(`statistics-${rows}`, rows, cleanup);
  const url = `${service.baseUrl}/api/v1/access.svc.admin/v1/repository/statistics?${new URLSearchParams({ sessionId: session, repositoryId: REPOSITORY_ID })}`;
  return async () => {
    const started = performance.now();
    const response = await fetch(url);
    const body = (await response.json()) as { contentStatistics?: { numberOfContents: number; numberOfFolders: number } };
    const ms = performance.now() - started;
    if (response.status !== 200 || body.contentStatistics?.numberOfContents !== rows || body.contentStatistics.numberOfFolders !== seededFolders(rows)) {
      throw new Error(`expected 200 with ${rows} contents, got ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    }
    return ms;
  };
}

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`statistics: ${SMALL_ROWS.toLocaleString('en')} and ${ROWS.toLocaleString('en')} contents, GET A/repository/statistics through REST`);
  const sizes = [SMALL_ROWS, ROWS];
  const samplers = [await seeded(SMALL_ROWS, cleanup), await seeded(ROWS, cleanup)];
  // the two sizes sampled in turn, so that the other agents' load on the machine falls on both alike
  const latencies: number[][] = [[], []];
  for (let n = 0; n < WARMUP + SAMPLES; n++) {
    for (const [i, sample] of samplers.entries()) {
      const ms = await sample();
      if (n >= WARMUP) latencies[i]!.push(ms);
    }
  }
  const p95s = latencies.map((times, i) => {
    times.sort((a, b) => a - b);
    const p95 = percentile(times, 95);
    console.log(`${sizes[i]!.toLocaleString('en')} contents: p50 ${fmt(percentile(times, 50))} ms  p95 ${fmt(p95)} ms  (${SAMPLES} samples)`);
    return p95;
  });
  const [small, large] = p95s as [number, number];
  const growth = large / small;
  console.log(
    targetsLine('statistics', `p95 ${fmt(large, 0)} ms at ${ROWS} contents, growth ${fmt(growth, 2)}× from ${SMALL_ROWS}`, [
      ...(large < TARGET_MS ? [] : [`p95 < ${TARGET_MS} ms`]),
      ...(growth <= TARGET_GROWTH ? [] : [`growth <= ${TARGET_GROWTH}`]),
    ]),
  );
}

await runBench(main);
