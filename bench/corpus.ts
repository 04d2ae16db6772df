/**
 * Real-world PDFs through every conversion path (issue 29 item 4, DESIGN §12): the PDFs of
 * `../shared/corpus/` (pdf.js's test suite: broken cross-reference tables, odd fonts, JBIG2, CCITT,
 * encrypted files, fuzzed files) are uploaded to the real service (a child process, OCR on) and each
 * goes, as a REST client would drive it, through:
 *
 *   image    POST C/convert/image, CONTENT_REPRESENTATION, png: the whole document, every page
 *   merge    POST C/convert/merge of the PDF and a small valid PDF into a new content
 *   extract  the full text its upload queued (OCR_ENABLED=true), as an administrator sees its state in
 *            GET C/jobs: the extraction job that took it, and whether it is listed among its failures
 *
 * A path is one entry of `paths` with its own driver: `drive(context, item)` answers what became of one
 * PDF (done, failed with a reason, or stuck past the path's bound). The thumbnail of issue 29 item 3 is
 * one more:
 *   thumbnail  the preview its upload asked for: its thumbnail job, once final, and then
 *              GET C/content/{id}/thumbnail answering a PNG of at most 256 px on its long side
 *
 * Per path: the shares done and failed, the failures grouped by reason. Targets: no 5xx on any call,
 * no stuck job (each reaches a final state within its path's bound), every failure a `panic` with a
 * reason code and a message, no render, merge or extraction process over its memory bound (its resident
 * size sampled every 250 ms, 10 % slack for the service's own 50 ms sampling), and the service alive at
 * the end.
 *
 *   npm run bench -- corpus            (CORPUS_DIR=… another folder of PDFs; CORPUS_LIMIT=n: the first n)
 *
 * The service runs with its defaults otherwise (bounds, DPI, JOB_CONCURRENCY); settings in the
 * environment reach it (e.g. CONV_RENDER_MEMORY_MB=512).
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { projectRoot } from '../src/paths.js';
import { textPdf } from '../test/helpers/pdf.js';
import {
  ADMIN_PASSWORD,
  commandOf,
  contentBase,
  fmt,
  header,
  login,
  makeTempDir,
  MiB,
  multipartFrame,
  processTree,
  removeDir,
  rssOf,
  runBench,
  sleep,
  startServiceChild,
  targetsLine,
  type ServiceChild,
} from './lib.js';

const corpus = path.resolve(process.env.CORPUS_DIR ?? path.resolve(projectRoot, '../shared/corpus'));
const limit = process.env.CORPUS_LIMIT ? Number(process.env.CORPUS_LIMIT) : Infinity;
/**
 * The whole run is bounded: 4.5 minutes for the 185 PDFs on 2 cores under a load of 4 to 10, but a
 * conversion may take its bound (CONV_RENDER_TIMEOUT_MS) and the extraction its own (below).
 */
const RUN_LIMIT_MINUTES = 40;

/** One PDF of the corpus, uploaded. */
interface Item {
  file: string;
  contentId: string;
}

/** What became of one PDF on one path. */
type Outcome =
  | { state: 'done'; note?: string }
  /** `final`: the job's state (it must be `panic`); `reason`: `<reasonCode>: <message>` (a missing part is a target missed) */
  | { state: 'failed'; final: string; reasonCode?: string; message?: string }
  | { state: 'stuck'; last: string };

/** The service under test and a REST client of it that counts every 5xx it answers. */
class Context {
  readonly base: string;
  /** `<method> <route>` → the 5xx answers */
  readonly serverErrors = new Map<string, string[]>();
  calls = 0;
  mergeFolderId = '';
  smallPdfId = '';
  private backgroundJobs: { at: number; jobs: Promise<Record<string, any>[]> } | undefined;

  constructor(
    baseUrl: string,
    readonly session: string,
    readonly config: ReturnType<typeof loadConfig>,
  ) {
    this.base = contentBase(baseUrl);
  }

  /** A REST call as a client makes it (session in the query); the parsed JSON body, or the text. */
  async rest(method: string, route: string, query: Record<string, string> = {}, body?: BodyInit, contentType?: string): Promise<{ status: number; body: any }> {
    this.calls++;
    const params = new URLSearchParams({ sessionId: this.session, ...query });
    const response = await fetch(`${this.base}${route}?${params}`, {
      method,
      ...(body !== undefined && { body, headers: { 'content-type': contentType ?? 'application/json' } }),
    });
    const text = await response.text();
    if (response.status >= 500) {
      const key = `${method} ${route.replace(/\/[0-9a-f-]{16,}/g, '/{id}')}`;
      this.serverErrors.set(key, [...(this.serverErrors.get(key) ?? []), `${response.status} ${text.slice(0, 300)}`]);
    }
    try {
      return { status: response.status, body: JSON.parse(text) };
    } catch {
      return { status: response.status, body: text };
    }
  }

  /** GET C/jobs/status until the job is final, or `stuck` once `boundMs` passed since `since`. */
  async finalJob(jobId: string, since: number, boundMs: number): Promise<Record<string, any> | { stuck: string }> {
    for (;;) {
      const { status, body } = await this.rest('GET', '/jobs/status', { jobId });
      if (status === 200 && ['Done', 'panic', 'cancelled'].includes(body.state)) return body.serviceRequestJob;
      if (Date.now() - since > boundMs) return { stuck: status === 200 ? `${body.state} ${body.serviceRequestJob.percentage ?? 0} %` : `status ${status}` };
      await sleep(250);
    }
  }

  /**
   * The repository's background jobs of one request type (GET C/jobs as the administrator:
   * `ExtractTextRequest`, `ThumbnailRequest`), all read again at most every 2 s by all who ask.
   */
  async backgroundJobsNow(requestType: string): Promise<Record<string, any>[]> {
    if (!this.backgroundJobs || Date.now() - this.backgroundJobs.at > 2000) {
      const read = async () => {
        const jobs: Record<string, any>[] = [];
        for (let offset = 0; ; offset += 1000) {
          const { status, body } = await this.rest('GET', '/jobs', { limit: '1000', offset: String(offset) });
          if (status !== 200) throw new Error(`GET C/jobs: ${status} ${JSON.stringify(body)}`);
          jobs.push(...body.entries);
          if (body.entries.length < 1000) return jobs;
        }
      };
      this.backgroundJobs = { at: Date.now(), jobs: read() };
    }
    return (await this.backgroundJobs.jobs).filter((job) => job.requestTypeShortName === requestType);
  }
}

/** A final job record as an outcome: Done, or a failure (a `cancelled` or a panic without reason misses a target). */
function outcomeOf(job: Record<string, any> | { stuck: string }, done: (job: Record<string, any>) => Promise<Outcome> | Outcome = () => ({ state: 'done' })): Promise<Outcome> | Outcome {
  if ('stuck' in job) return { state: 'stuck', last: job.stuck as string };
  if (job.state === 'Done') return done(job);
  return { state: 'failed', final: job.state, reasonCode: job.reasonCode, message: job.errorMessage };
}

/**
 * A conversion path: its name, how many of its PDFs a client has under way at once, and its driver,
 * which answers `stuck` for a PDF not final within `boundMs` of its start.
 */
interface CorpusPath {
  name: string;
  inFlight: number;
  boundMs: number;
  drive(context: Context, item: Item, boundMs: number): Promise<Outcome>;
}

/** The whole document to PNG page images (as a viewer asks for it); done when every page is stored, placeholders counted. */
async function imagePath(context: Context, item: Item, boundMs: number): Promise<Outcome> {
  const submitted = Date.now();
  const started = await context.rest('POST', '/convert/image', {}, JSON.stringify({ contentId: item.contentId, resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png' }));
  if (started.status !== 200) return { state: 'failed', final: `HTTP ${started.status}`, reasonCode: started.body?.reasonCode, message: started.body?.message };
  return outcomeOf(await context.finalJob(started.body.jobId, submitted, boundMs), async () => {
    const pages = await context.rest('GET', `/content/${item.contentId}/representations`);
    const entries: { status: string }[] = pages.body?.entries ?? [];
    const placeholders = entries.filter((page) => page.status === 'PLACEHOLDER').length;
    return { state: 'done', note: placeholders > 0 ? `${placeholders} of ${entries.length} pages placeholders` : undefined };
  });
}

/** The PDF and a small valid PDF merged into a new content. */
async function mergePath(context: Context, item: Item, boundMs: number): Promise<Outcome> {
  const submitted = Date.now();
  const started = await context.rest(
    'POST',
    '/convert/merge',
    {},
    JSON.stringify({ contentIds: [item.contentId, context.smallPdfId], resultAction: 'NEW_CONTENT', newContentSpecification: { name: `${item.file}-merged`, parentId: context.mergeFolderId } }),
  );
  if (started.status !== 200) return { state: 'failed', final: `HTTP ${started.status}`, reasonCode: started.body?.reasonCode, message: started.body?.message };
  return outcomeOf(await context.finalJob(started.body.jobId, submitted, boundMs));
}

/**
 * The text its upload queued: the newest extraction job that took the content, once final; failed when
 * the job lists it among its failures or ended in panic (each of its contents failed then: the job's
 * reason is the first failure's). GET C/jobs lists the newest first. (A job lists at most 100 failures:
 * past them a failure would show as done here; the 185 PDFs fail 5 times.)
 */
async function extractPath(context: Context, item: Item, boundMs: number): Promise<Outcome> {
  const since = Date.now();
  for (;;) {
    const job = (await context.backgroundJobsNow('ExtractTextRequest')).find((candidate) => candidate.contentIds?.includes(item.contentId));
    if (job && ['Done', 'panic', 'cancelled'].includes(job.state)) {
      return outcomeOf(job, (record) => {
        const failure = (JSON.parse(record.serializedResult ?? '{}').failed ?? []).find((failed: { contentIds: string[] }) => failed.contentIds.includes(item.contentId));
        return failure ? { state: 'failed', final: 'panic', reasonCode: failure.reasonCode, message: failure.message } : { state: 'done' };
      });
    }
    if (Date.now() - since > boundMs) return { state: 'stuck', last: job ? `${job.state} (job ${job.id})` : 'no extraction job took it' };
    await sleep(1000);
  }
}

/**
 * The preview its upload asked for (issue 29 item 3): the thumbnail job of the content, once final;
 * done when `GET C/content/{id}/thumbnail` then answers a PNG of at most 256 px on its long side.
 */
async function thumbnailPath(context: Context, item: Item, boundMs: number): Promise<Outcome> {
  const since = Date.now();
  for (;;) {
    const job = (await context.backgroundJobsNow('ThumbnailRequest')).find((candidate) => candidate.contentIds?.includes(item.contentId));
    if (job && ['Done', 'panic', 'cancelled'].includes(job.state)) {
      return outcomeOf(job, async () => {
        const response = await fetch(`${context.base}/content/${item.contentId}/thumbnail?${new URLSearchParams({ sessionId: context.session })}`);
        context.calls++;
        const png = Buffer.from(await response.arrayBuffer());
        if (response.status !== 200 || response.headers.get('content-type') !== 'image/png') return { state: 'failed', final: `thumbnail HTTP ${response.status}`, message: png.toString().slice(0, 200) };
        // the PNG header's width and height (IHDR)
        const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
        return Math.max(width, height) <= 256 ? { state: 'done' } : { state: 'failed', final: 'thumbnail too large', message: `${width}×${height}` };
      });
    }
    if (Date.now() - since > boundMs) return { state: 'stuck', last: job ? `${job.state} (job ${job.id})` : 'no thumbnail job took it' };
    await sleep(1000);
  }
}

/**
 * The paths, with their bounds: a conversion job's from its submission is the render bound
 * (CONV_RENDER_TIMEOUT_MS) for itself and for one job ahead of it in the queue (a path has at most
 * JOB_CONCURRENCY under way), and a minute more. Text extraction is one queue per uploader, each file
 * within FULLTEXT_EXTRACT_TIMEOUT_MS (OCR stops before it): the whole corpus gets CORPUS_EXTRACT_BOUND_MS
 * (30 minutes) from the end of its upload.
 */
function pathsFor(config: ReturnType<typeof loadConfig>): CorpusPath[] {
  const jobBoundMs = 2 * config.CONV_RENDER_TIMEOUT_MS + 60_000;
  const inFlight = Math.max(1, config.JOB_CONCURRENCY);
  return [
    { name: 'image', inFlight, boundMs: jobBoundMs, drive: imagePath },
    { name: 'merge', inFlight, boundMs: jobBoundMs, drive: mergePath },
    { name: 'extract', inFlight: Infinity, boundMs: Number(process.env.CORPUS_EXTRACT_BOUND_MS ?? 30 * 60_000), drive: extractPath },
    // thumbnails run one at a time in their own slot: the whole corpus's within the extraction's bound
    { name: 'thumbnail', inFlight: Infinity, boundMs: Number(process.env.CORPUS_EXTRACT_BOUND_MS ?? 30 * 60_000), drive: thumbnailPath },
  ];
}

/** Runs `drive` over the items with at most `inFlight` at once; the outcomes in the items' order, and how long each took (ms). */
async function driveAll(context: Context, corpusPath: CorpusPath, items: Item[]): Promise<{ outcomes: Outcome[]; took: number[] }> {
  const outcomes: Outcome[] = new Array(items.length);
  const took: number[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      const started = performance.now();
      outcomes[index] = await corpusPath.drive(context, items[index]!, corpusPath.boundMs).catch((error: Error): Outcome => ({ state: 'failed', final: 'bench error', message: error.message }));
      took[index] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: Math.min(corpusPath.inFlight, items.length) }, lane));
  return { outcomes, took };
}

/** The bounded child processes of the service (by their script) and their memory bound in bytes. */
function childKinds(config: ReturnType<typeof loadConfig>): Record<string, number> {
  return {
    'render-child': config.CONV_RENDER_MEMORY_MB * MiB,
    'merge-child': config.CONV_RENDER_MEMORY_MB * MiB,
    'extract-child': config.FULLTEXT_EXTRACT_MEMORY_MB * MiB,
  };
}

/** Samples the service's process tree: the peak resident size of each kind of child, and the children over their bound. */
class ChildSampler {
  readonly peaks = new Map<string, number>();
  readonly seen = new Map<string, Set<number>>();
  readonly over: string[] = [];
  servicePeak = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(service: ServiceChild, bounds: Record<string, number>) {
    this.timer = setInterval(() => {
      this.servicePeak = Math.max(this.servicePeak, rssOf(service.pid));
      for (const pid of processTree(service.pid)) {
        const command = commandOf(pid);
        if (!command) continue;
        const kind = Object.keys(bounds).find((name) => command.includes(`${name}.js`));
        if (!kind) continue;
        const rss = rssOf(pid);
        this.peaks.set(kind, Math.max(this.peaks.get(kind) ?? 0, rss));
        this.seen.set(kind, (this.seen.get(kind) ?? new Set()).add(pid));
        if (rss > bounds[kind]! * 1.1) this.over.push(`${kind} ${pid}: ${fmt(rss / MiB, 0)} MB (bound ${fmt(bounds[kind]! / MiB, 0)} MB)`);
      }
    }, 250);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** `<reasonCode>: <message>` with the file's own name left out, so that like failures group together. */
function reasonOf(outcome: Extract<Outcome, { state: 'failed' }>, file: string): string {
  const message = (outcome.message ?? '(no message)').replaceAll(file, '<file>').replace(/\b[0-9a-f]{8}-[0-9a-f-]{27,}\b/g, '<id>');
  return `${outcome.final === 'panic' ? '' : `[${outcome.final}] `}${outcome.reasonCode ?? '(no reason code)'}: ${message.length > 160 ? `${message.slice(0, 160)}…` : message}`;
}

await runBench(
  async (cleanup) => {
    const dir = makeTempDir('corpus');
    cleanup(() => removeDir(dir));
    const environment = { OCR_ENABLED: 'true', LOG_LEVEL: 'warn' };
    const config = loadConfig({ ...process.env, ...environment, DATA_DIR: dir, ADMIN_PASSWORD });
    const paths = pathsFor(config);
    header(`Real-world PDFs of ${corpus} through ${paths.map((p) => p.name).join(', ')}`);
    if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus}: put the PDFs there or set CORPUS_DIR`);
    const files = (await fs.readdir(corpus))
      .filter((name) => name.toLowerCase().endsWith('.pdf'))
      .sort()
      .slice(0, limit);
    if (files.length === 0) throw new Error(`no PDFs in ${corpus}`);

    const service = await startServiceChild(dir, environment);
    cleanup(() => service.stop());
    const sampler = new ChildSampler(service, childKinds(config));
    cleanup(() => sampler.stop());
    const context = new Context(service.baseUrl, await login(service.baseUrl), config);

    // the corpus, uploaded one file after another as a client would; each upload queues its text
    const t0 = performance.now();
    const folder = await context.rest('POST', '/folder', {}, JSON.stringify({ name: 'corpus' }));
    const mergeFolder = await context.rest('POST', '/folder', {}, JSON.stringify({ name: 'merged' }));
    context.mergeFolderId = mergeFolder.body.id;
    const upload = async (name: string, bytes: Buffer) => {
      const { head, tail, contentType } = multipartFrame({ name, parentId: folder.body.id }, name);
      return context.rest('POST', '/content', {}, Buffer.concat([head, bytes, tail]), contentType);
    };
    context.smallPdfId = (await upload('small-valid.pdf', textPdf(1, 5))).body.id;
    const items: Item[] = [];
    const refused: string[] = [];
    for (const file of files) {
      const uploaded = await upload(file, await fs.readFile(path.join(corpus, file)));
      if (uploaded.status === 201) items.push({ file, contentId: uploaded.body.id });
      else refused.push(`${file}: ${uploaded.status} ${JSON.stringify(uploaded.body).slice(0, 200)}`);
    }
    console.log(`${items.length} of ${files.length} PDFs uploaded in ${fmt((performance.now() - t0) / 1000, 1)} s${refused.length > 0 ? `; refused: ${refused.join('; ')}` : ''}`);

    const results = await Promise.all(
      paths.map(async (corpusPath) => {
        const started = performance.now();
        const { outcomes, took } = await driveAll(context, corpusPath, items);
        const seconds = (performance.now() - started) / 1000;
        console.log(`  ${corpusPath.name} finished in ${fmt(seconds, 0)} s`);
        return { corpusPath, outcomes, took, seconds };
      }),
    );
    const alive = service.child.exitCode === null && service.child.signalCode === null;
    sampler.stop();

    let stuck = 0;
    let withoutReason = 0;
    const figures: string[] = [];
    for (const { corpusPath, outcomes, took, seconds } of results) {
      const done = outcomes.filter((o) => o.state === 'done').length;
      const failed = outcomes.filter((o) => o.state === 'failed').length;
      const stuckHere = outcomes.filter((o) => o.state === 'stuck').length;
      stuck += stuckHere;
      const share = (n: number) => `${fmt((100 * n) / items.length, 1)} %`;
      console.log(`\n## ${corpusPath.name}: ${done} done (${share(done)}), ${failed} failed (${share(failed)}), ${stuckHere} stuck, in ${fmt(seconds, 0)} s`);
      const groups = new Map<string, string[]>();
      const notes: string[] = [];
      outcomes.forEach((outcome, index) => {
        const file = items[index]!.file;
        if (outcome.state === 'done' && outcome.note) notes.push(`${file} (${outcome.note})`);
        if (outcome.state === 'stuck') console.log(`  STUCK ${file}: ${outcome.last}`);
        if (outcome.state !== 'failed') return;
        if (outcome.final !== 'panic' || !outcome.reasonCode || !outcome.message) withoutReason++;
        const reason = reasonOf(outcome, file);
        groups.set(reason, [...(groups.get(reason) ?? []), file]);
      });
      for (const [reason, group] of [...groups].sort((a, b) => b[1].length - a[1].length)) {
        console.log(`  ${String(group.length).padStart(3)} × ${reason}\n        ${group.slice(0, 8).join(', ')}${group.length > 8 ? `, … (${group.length - 8} more)` : ''}`);
      }
      const slowest = took.map((ms, index) => ({ ms, file: items[index]!.file })).sort((a, b) => b.ms - a.ms).slice(0, 3);
      console.log(`  longest until final (queue included): ${slowest.map(({ ms, file }) => `${file} ${fmt(ms / 1000, 1)} s`).join(', ')}`);
      if (notes.length > 0) console.log(`  done with notes (${notes.length}): ${notes.slice(0, 12).join(', ')}${notes.length > 12 ? ', …' : ''}`);
      figures.push(`${corpusPath.name} ${done}/${failed}${stuckHere > 0 ? `/${stuckHere} stuck` : ''}`);
    }

    const serverErrors = [...context.serverErrors.values()].reduce((sum, list) => sum + list.length, 0);
    console.log(`\n${context.calls} REST calls, ${serverErrors} answered 5xx`);
    for (const [route, answers] of context.serverErrors) console.log(`  ${answers.length} × ${route}: ${answers[0]}`);
    const peaks = [...sampler.peaks].map(([kind, peak]) => `${kind} ${fmt(peak / MiB, 0)} MB (${sampler.seen.get(kind)!.size} processes)`);
    console.log(`peak resident sizes: service ${fmt(sampler.servicePeak / MiB, 0)} MB; ${peaks.join(', ') || 'no child process seen'}`);
    for (const over of sampler.over.slice(0, 10)) console.log(`  OVER BOUND ${over}`);
    if (!alive) console.log(`the service died during the run:\n${service.output().slice(-4000)}`);

    const missed: string[] = [];
    if (serverErrors > 0) missed.push(`zero 5xx (${serverErrors})`);
    if (stuck > 0) missed.push(`zero stuck jobs (${stuck})`);
    if (withoutReason > 0) missed.push(`every failure a panic with a reason (${withoutReason} not)`);
    if (sampler.over.length > 0) missed.push(`no process over its bound (${new Set(sampler.over.map((o) => o.split(':')[0])).size})`);
    if (!alive) missed.push('the service alive');
    console.log(targetsLine('corpus', `${items.length} PDFs, done/failed: ${figures.join(', ')}; ${serverErrors} 5xx, ${stuck} stuck, ${withoutReason} failures without reason`, missed));
  },
  { limitMinutes: RUN_LIMIT_MINUTES },
);
