/**
 * Conversion (issue 9 item 8): pages per second, PDF → PNG at 150 DPI, on a generated 50-page text PDF
 * and a 50-page mixed text-and-image PDF, rendered by the service's render process (pdfjs-dist +
 * @napi-rs/canvas + sharp, one process; warm, as the service's pool hands it to a conversion, and
 * with its start for comparison), against `pdftoppm -png -r 150` (poppler-utils) and
 * `mutool draw -r 150 -o x%d.png` (mupdf-tools) on the same files, one process each. Also: object
 * counting as a share of render time, and throughput through the whole job path (REST → queue →
 * worker → representations) with 1 and 2 workers.
 *
 *   npm run build && node dist/bench/conversion.js      (or: npm run bench -- conversion)
 *   peers: apt-get install poppler-utils mupdf-tools (a missing peer is skipped with the reason)
 *   knobs: CONV_BENCH_JOBS (6 jobs for the job path), CONV_BENCH_PAGES (10 pages a job's document: 1
 *   page a job shows what a job costs apart from its pages), CONV_BENCH_RUNS (3: the service and
 *   the peers run in turn, and the job path runs as often, each figure is the best of its runs, so a
 *   burst of load on the shared machine does not decide a ratio); CONV_BENCH_ONLY=jobpath measures the
 *   direct rate once and then only the job path
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildPdf, textPage, textPdf, type PageSpec } from '../test/helpers/pdf.js';
import { extractionWindowMs } from '../src/modules/fulltext/operations.js';
import { renderInChild, renderPool } from '../workers/render/render-process.js';
import { maxPagePixels } from '../workers/render/protocol.js';
import { readdirSync } from 'node:fs';
import { commandOf, contentBase, cpuSecondsOf, fmt, header, isClientBackend, login, makeTempDir, multipartFrame, processTree, ratio, reapedChildrenCpuMs, removeDir, runBench, sleep, startServiceChild, statFields, targetsLine } from './lib.js';

const DPI = 150;
const JOBS = Number(process.env.CONV_BENCH_JOBS ?? 6);
const PAGES = Math.max(1, Number(process.env.CONV_BENCH_PAGES ?? 10));
const RUNS = Math.max(1, Number(process.env.CONV_BENCH_RUNS ?? 3));
const JOB_PATH_ONLY = process.env.CONV_BENCH_ONLY === 'jobpath';

/** 50 pages: even pages text, odd pages a 800×600 photo-like image with a caption. */
function mixedPdf(): Buffer {
  const pages: PageSpec[] = [];
  for (let p = 0; p < 50; p++) {
    if (p % 2 === 0) {
      pages.push(textPage(Array.from({ length: 40 }, (_, l) => `Page ${p + 1}, line ${l + 1}: mixed content with text and pictures.`)));
      continue;
    }
    const width = 800;
    const height = 600;
    const rgb = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 3;
        rgb[i] = (x * 255) / width;
        rgb[i + 1] = (y * 255) / height;
        rgb[i + 2] = ((x ^ y) + p * 17) & 255;
      }
    }
    pages.push({ content: `q 480 0 0 360 66 380 cm /Im1 Do Q\nBT /F1 14 Tf 66 350 Td (Figure ${p + 1}) Tj ET`, image: { width, height, rgb } });
  }
  return buildPdf(pages);
}

interface OwnRun {
  pagesPerSecond: number;
  countShare: number;
}

/**
 * One rendering of `file` by a render process of `pool`: `warm` takes a process started before (as the
 * service's conversions do after the first, workers/render/render-process.ts), otherwise the time
 * includes starting the process and loading pdfjs, canvas and sharp.
 */
async function renderOwn(file: string, outputDir: string, warm: boolean): Promise<OwnRun> {
  // the service's default bound (CONV_RENDER_MEMORY_MB)
  const pool = renderPool(1024, 1);
  try {
    if (warm) await pool.warm(1);
    let countMs = 0;
    let pages = 0;
    const started = performance.now();
    await renderInChild(
      pool,
      { type: 'start', inputPath: file, fileName: path.basename(file), kind: 'pdf', format: 'png', dpi: DPI, maxPixels: 100_000_000, maxPagePixels: maxPagePixels(100_000_000, 1024), outputDir },
      600_000,
      {
        inspected: async (count, _objects, ms) => {
          pages = count;
          countMs = ms;
          return { type: 'render', placeholders: [], skip: [] };
        },
        page: async (page) => fs.rm(page.path),
      },
    );
    const totalMs = performance.now() - started;
    return { pagesPerSecond: pages / (totalMs / 1000), countShare: countMs / (totalMs - countMs) };
  } finally {
    pool.close();
  }
}

function peer(command: string, args: string[], pages: number): number | string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`]);
  if (found.status !== 0) return `${command} not installed (apt-get install ${command === 'pdftoppm' ? 'poppler-utils' : 'mupdf-tools'})`;
  const started = performance.now();
  const run = spawnSync(command, args, { stdio: 'ignore' });
  if (run.status !== 0) return `${command} failed (${run.status})`;
  return pages / ((performance.now() - started) / 1000);
}

/** Polls `GET C/jobs` until no job is pending or running. */
async function jobsSettled(base: string, session: string): Promise<void> {
  for (;;) {
    const { entries } = (await (await fetch(`${base}/jobs?sessionId=${session}&limit=1000`)).json()) as { entries: { state: string }[] };
    if (!entries.some((e) => ['pending', 'running'].includes(e.state))) return;
    await sleep(100);
  }
}

/**
 * CPU seconds so far of the service's process (its main thread, where the jobs, the REST requests and
 * the statements run, apart from its other threads: V8's, libuv's pool, the durable-io workers), its
 * render processes (and of them their main threads, which set one worker's pace: the PNG encoding,
 * collections and file writes run on other threads), Postgres (the backends serving connections apart
 * from the rest: postmaster, writers, checkpointer, I/O workers, autovacuum, and the processes that
 * ended, reaped by the postmaster), the other children (extraction processes) and the machine's kernel
 * threads (journal commits and writeback of every fsync — the whole machine's, so on a shared machine
 * others' too).
 */
function jobPathCpu(servicePid: number) {
  const [self, ...descendants] = processTree(servicePid);
  const mainThreadCpu = (pid: number) => cpuSecondsOf(`${pid}/task/${pid}`);
  const cpu = {
    service: cpuSecondsOf(self!),
    serviceMain: mainThreadCpu(self!),
    render: 0,
    renderMain: 0,
    postgres: 0,
    postgresBackends: 0,
    otherChildren: 0,
    kernelThreads: kernelThreadsCpuSeconds(),
  };
  for (const pid of descendants) {
    const command = commandOf(pid);
    if (command.includes('render-child')) {
      cpu.render += cpuSecondsOf(pid);
      cpu.renderMain += mainThreadCpu(pid);
    } else if (command.startsWith('postgres: ')) {
      cpu.postgres += cpuSecondsOf(pid);
      if (isClientBackend(pid)) cpu.postgresBackends += cpuSecondsOf(pid);
    } else if (command.includes('/bin/postgres')) {
      // the postmaster, with the processes it reaped
      cpu.postgres += cpuSecondsOf(pid) + reapedChildrenCpuMs(pid) / 1000;
    } else cpu.otherChildren += cpuSecondsOf(pid);
  }
  return cpu;
}

/** CPU seconds so far of the kernel's threads (kthreadd and its children). */
function kernelThreadsCpuSeconds(): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && (entry === '2' || fields[1] === '2')) seconds += (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return seconds;
}

type JobPathCpu = ReturnType<typeof jobPathCpu>;

interface JobPathRun {
  pagesPerSecond: number;
  /** CPU milliseconds per page of each part of jobPathCpu, and of this process (the load generator: uploads, submissions, status polls) */
  cpuMsPerPage: JobPathCpu & { bench: number };
}

/**
 * Pages per second through the whole job path, `RUNS` times on one service with `workers` slots
 * (JOB_CONCURRENCY), each run on new contents (stored pages would be reused). The uploads' own
 * background jobs (text extraction, previews) end before the conversions are submitted, the coalesced
 * extraction included: they are the upload's cost, not the job path's.
 */
async function jobPath(dir: string, workers: number, pdf: Buffer): Promise<JobPathRun[]> {
  const service = await startServiceChild(path.join(dir, `service-${workers}`), { JOB_CONCURRENCY: String(workers), CONV_PDF_DPI: String(DPI), LOG_LEVEL: 'warn' });
  try {
    const session = await login(service.baseUrl);
    const base = contentBase(service.baseUrl);
    const runs: JobPathRun[] = [];
    for (let run = 0; run < RUNS; run++) {
      const ids: string[] = [];
      for (let i = 0; i < JOBS; i++) {
        const { head, tail, contentType } = multipartFrame({ name: `bench-${workers}-${run}-${i}.pdf` }, `bench-${i}.pdf`);
        const response = await fetch(`${base}/content?sessionId=${session}`, { method: 'POST', headers: { 'content-type': contentType }, body: Buffer.concat([head, pdf, tail]) });
        ids.push(((await response.json()) as { id: string }).id);
      }
      // the extraction of all but the first upload is submitted at the end of its coalescing window
      // (submitExtraction): before that no job may be pending, and the extraction then ran in the
      // measured window, in a conversion slot (2.5 ms a page of "other children" at 00:01 UTC, conv9)
      await sleep(extractionWindowMs + 250);
      await jobsSettled(base, session);
      const cpuBefore = jobPathCpu(service.pid);
      // this process's own CPU apart from its readings of /proc (two passes over every process each)
      const benchBefore = process.cpuUsage();
      const started = Date.now();
      const jobIds = await Promise.all(
        ids.map(async (contentId) => {
          const response = await fetch(`${base}/convert/image?sessionId=${session}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ contentId, resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png' }),
          });
          return ((await response.json()) as { jobId: string }).jobId;
        }),
      );
      // the end is when the last job ended, as its record says (the same clock): the polling can be slow
      // and costs the service little (the service runs on the cores it measures)
      let ended = 0;
      for (const jobId of jobIds) {
        for (;;) {
          const { state, serviceRequestJob } = (await (await fetch(`${base}/jobs/status?sessionId=${session}&jobId=${jobId}`)).json()) as {
            state: string;
            serviceRequestJob: { endTimestamp?: string };
          };
          if (state === 'panic') throw new Error(`job ${jobId} failed`);
          if (state === 'Done') {
            ended = Math.max(ended, Date.parse(serviceRequestJob.endTimestamp!.replace('+0000', 'Z')));
            break;
          }
          await sleep(250);
        }
      }
      const bench = process.cpuUsage(benchBefore);
      const cpuAfter = jobPathCpu(service.pid);
      const cpuMsPerPage = Object.fromEntries(Object.entries(cpuAfter).map(([key, after]) => [key, ((after - cpuBefore[key as keyof JobPathCpu]) * 1000) / (JOBS * PAGES)])) as JobPathCpu;
      runs.push({ pagesPerSecond: (JOBS * PAGES) / ((ended - started) / 1000), cpuMsPerPage: { ...cpuMsPerPage, bench: (bench.user + bench.system) / 1000 / (JOBS * PAGES) } });
    }
    return runs;
  } finally {
    await service.stop();
  }
}

await runBench(async (cleanup) => {
  header(`conversion: PDF → PNG at ${DPI} DPI, best of ${RUNS} runs each`);
  const dir = makeTempDir('conversion');
  cleanup(() => removeDir(dir));
  const documents = JOB_PATH_ONLY ? { text: textPdf(50) } : { text: textPdf(50), mixed: mixedPdf() };
  const results: Record<string, { own: OwnRun; pdftoppm: number | string; mutool: number | string }> = {};
  for (const [name, bytes] of Object.entries(documents)) {
    const file = path.join(dir, `${name}.pdf`);
    await fs.writeFile(file, bytes);
    const renders: OwnRun[] = [];
    const coldRenders: OwnRun[] = [];
    let pdftoppm: number | string = 0;
    let mutool: number | string = 0;
    const best = (previous: number | string, next: number | string) => (typeof next === 'string' ? next : typeof previous === 'string' ? previous : Math.max(previous, next));
    const fastest = (runs: OwnRun[]) => runs.reduce((a, b) => (b.pagesPerSecond > a.pagesPerSecond ? b : a));
    for (let run = 0; run < RUNS; run++) {
      renders.push(await renderOwn(file, path.join(dir, `own-${name}`), true));
      if (JOB_PATH_ONLY) continue;
      pdftoppm = best(pdftoppm, peer('pdftoppm', ['-png', '-r', String(DPI), file, path.join(dir, `poppler-${name}`)], 50));
      mutool = best(mutool, peer('mutool', ['draw', '-r', String(DPI), '-o', path.join(dir, `mupdf-${name}-%d.png`), file], 50));
      coldRenders.push(await renderOwn(file, path.join(dir, `own-${name}`), false));
    }
    if (JOB_PATH_ONLY) pdftoppm = mutool = 'not run (CONV_BENCH_ONLY=jobpath)';
    const own = fastest(renders);
    const withStart = coldRenders.length > 0 ? `${fmt(fastest(coldRenders).pagesPerSecond, 2)} with its start` : 'its start not measured';
    results[name] = { own, pdftoppm, mutool };
    const show = (v: number | string) => (typeof v === 'number' ? `${fmt(v, 2)} pages/s (×${fmt(ratio(own.pagesPerSecond, v), 2)})` : `skipped: ${v}`);
    console.log(
      `${name.padEnd(6)} service ${fmt(own.pagesPerSecond, 2)} pages/s (warm process; ${withStart}), counting ${fmt(own.countShare * 100, 1)} % of render time; pdftoppm ${show(pdftoppm)}; mutool ${show(mutool)}`,
    );
  }
  const textPages = textPdf(PAGES);
  // the job path's documents rendered directly (warm process): what such documents cost without the job path
  const documentFile = path.join(dir, `text-${PAGES}.pdf`);
  await fs.writeFile(documentFile, textPages);
  let directDocument = 0;
  for (let run = 0; run < RUNS; run++) directDocument = Math.max(directDocument, (await renderOwn(documentFile, path.join(dir, `own-text-${PAGES}`), true)).pagesPerSecond);
  const ones = await jobPath(dir, 1, textPages);
  const twos = await jobPath(dir, 2, textPages);
  const best = (runs: JobPathRun[]) => runs.reduce((a, b) => (b.pagesPerSecond > a.pagesPerSecond ? b : a));
  const one = best(ones).pagesPerSecond;
  const two = best(twos).pagesPerSecond;
  const direct = results.text!.own.pagesPerSecond;
  const runs = (list: JobPathRun[]) => list.map((r) => fmt(r.pagesPerSecond, 2)).join(', ');
  const cpu = (list: JobPathRun[]) => {
    const { service, serviceMain, render, renderMain, postgres, postgresBackends, otherChildren, bench, kernelThreads } = best(list).cpuMsPerPage;
    return `render ${fmt(render)} (main thread ${fmt(renderMain)}), service ${fmt(service)} (main thread ${fmt(serviceMain)}), postgres ${fmt(postgres)} (backends ${fmt(postgresBackends)}), other children ${fmt(otherChildren)}, bench ${fmt(bench)}, kernel threads ${fmt(kernelThreads)}`;
  };
  console.log(
    `job path (${JOBS} jobs × ${PAGES} text pages, best of ${RUNS}): 1 worker ${fmt(one, 2)} pages/s (×${fmt(ratio(one, direct), 2)} direct; ×${fmt(ratio(one, directDocument), 2)} the ${PAGES}-page document rendered directly, ${fmt(directDocument, 2)} pages/s; runs ${runs(ones)}), 2 workers ${fmt(two, 2)} pages/s (×${fmt(ratio(two, one), 2)} one; runs ${runs(twos)})`,
  );
  console.log(`job path CPU ms per page, best runs: 1 worker ${cpu(ones)}; 2 workers ${cpu(twos)}`);

  const pagesPerSecond = results.text!.own.pagesPerSecond;
  const missed: string[] = [];
  for (const [name, r] of Object.entries(results)) {
    if (typeof r.pdftoppm !== 'number') missed.push(`${name} vs pdftoppm not measured`);
    else if (r.own.pagesPerSecond < 3 * r.pdftoppm) missed.push(`${name} ≥ 3× pdftoppm`);
    if (typeof r.mutool !== 'number') missed.push(`${name} vs mutool not measured`);
    else if (r.own.pagesPerSecond < r.mutool) missed.push(`${name} ≥ 1.0× mutool`);
    if (r.own.countShare > 0.1) missed.push(`${name} counting ≤ 10 %`);
  }
  if (one < 0.8 * direct) missed.push('job path 1 worker ≥ 0.8× direct');
  if (two < 1.5 * one) missed.push('job path 2 workers ≥ 1.5× 1');
  const times = (peerName: 'pdftoppm' | 'mutool') => {
    const v = results.text![peerName];
    return typeof v === 'number' ? fmt(ratio(pagesPerSecond, v), 2) : 'n/a';
  };
  console.log(targetsLine('conversion', `${fmt(pagesPerSecond, 2)} pages/s, ${times('pdftoppm')}× pdftoppm, ${times('mutool')}× mutool`, missed));
});
