import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { convert, finishedJob, jobStatus } from '../../../test/helpers/conversion.js';
import { cachedFiles, contentUrl, newContent, sql } from '../../../test/helpers/entries.js';
import { textPdf } from '../../../test/helpers/pdf.js';
import { call, openSubscription, startTestService, type TestService } from '../../../test/helpers/service.js';
import { PageBatch } from './page-batch.js';
import type { RenderedPage } from './page-renderer.js';

const page = (n: number): RenderedPage => ({ page: n, path: `/nowhere/page-${n}.png`, width: 1, height: 1, placeholder: false });

/**
 * The PageBatch tests run on vitest's clock: what they prove is the order of a batch's timers and stores,
 * which real pauses of a few ms only show on an idle machine (a process held back 30 ms by a loaded one
 * saw a pause end before a store that was due first had run).
 */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);
/** What `seen` answers the moment `promise` resolves, the timers it waits for run (a store takes its time on that clock). */
async function whenSettled<T>(promise: Promise<unknown>, seen: () => T): Promise<T> {
  const answer = promise.then(seen);
  await vi.runAllTimersAsync();
  return answer;
}

/** A PageBatch whose stores are recorded (pages, percentage, when), each taking `storeMs`. */
function recorded(intervalMs: number, storeMs = 0, fail?: (pages: number[]) => Error | undefined) {
  const stores: { pages: number[]; percentage: number; at: number }[] = [];
  const started = Date.now();
  const batch = new PageBatch(intervalMs, async (pages, percentage) => {
    await new Promise((resolve) => setTimeout(resolve, storeMs));
    const numbers = pages.map((p) => p.page);
    const error = fail?.(numbers);
    if (error) throw error;
    stores.push({ pages: numbers, percentage, at: Date.now() - started });
  });
  return { batch, stores };
}

describe('PageBatch', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('stores the pages that come within the interval together, with the last one’s percentage; a page waits about the interval at most', async () => {
    const { batch, stores } = recorded(200);
    for (let n = 1; n <= 3; n++) {
      await batch.add(page(n), n * 10);
      await pass(20);
    }
    expect(stores).toEqual([]);
    await pass(250);
    expect(stores).toEqual([{ pages: [1, 2, 3], percentage: 30, at: expect.any(Number) }]);
    expect(stores[0]!.at).toBeGreaterThanOrEqual(195);
    expect(stores[0]!.at).toBeLessThan(400);
    await batch.add(page(4), 40);
    expect(await whenSettled(batch.end(), () => stores.at(-1))).toMatchObject({ pages: [4], percentage: 40 });
  });

  it('interval 0: each page stored before add answers', async () => {
    const { batch, stores } = recorded(0, 5);
    const pages = () => stores.map((s) => s.pages);
    expect(await whenSettled(batch.add(page(1), 50), pages)).toEqual([[1]]);
    expect(await whenSettled(batch.add(page(2), 100), pages)).toEqual([[1], [2]]);
  });

  it('stores one after the other: pages that come while a store runs wait for the next one', async () => {
    const { batch, stores } = recorded(10, 100);
    await batch.add(page(1), 10);
    await pass(30);
    await batch.add(page(2), 20);
    await batch.add(page(3), 30);
    expect(await whenSettled(batch.end(), () => stores.map((s) => s.pages))).toEqual([[1], [2, 3]]);
    expect(stores[1]!.at - stores[0]!.at).toBeGreaterThanOrEqual(95);
  });

  it('a store that failed fails the next add and end, and nothing is stored after it', async () => {
    const refused = new Error('cancelled');
    const { batch, stores } = recorded(10, 0, (pages) => (pages.includes(2) ? refused : undefined));
    await batch.add(page(1), 10);
    await pass(40);
    await batch.add(page(2), 20);
    await pass(40);
    await expect(batch.add(page(3), 30)).rejects.toBe(refused);
    await expect(batch.end()).rejects.toBe(refused);
    expect(stores.map((s) => s.pages)).toEqual([[1]]);
  });

  it('abandon drops the waiting pages (no store comes later) and waits for a store under way', async () => {
    const { batch, stores } = recorded(30, 80);
    await batch.add(page(1), 10);
    await pass(50);
    // page 1's store runs now; page 2 waits
    await batch.add(page(2), 20);
    expect(await whenSettled(batch.abandon(), () => stores.map((s) => s.pages))).toEqual([[1]]);
    await pass(100);
    expect(stores.map((s) => s.pages)).toEqual([[1]]);
  });
});

describe('a conversion stores its pages in batches (CONV_PAGE_COMMIT_MS)', () => {
  let service: TestService;
  beforeAll(async () => {
    // long enough that a document's pages are stored together, at the end
    service = await startTestService({ CONV_PAGE_COMMIT_MS: '10000', JOB_CONCURRENCY: '1' });
  });
  afterAll(() => service?.stop());

  const representationsOf = (contentId: string) =>
    sql<{ page: number; status: string; created_at: string }>(service, `select page, status, created_at::text from representation where source_entry_id = ? order by page`, [contentId]);

  it('pages that come within the interval are recorded in one transaction, files and rows, before the job reports their percentage; subscribers see it', { timeout: 120_000 }, async () => {
    const content = await newContent(service, { name: 'batched.pdf', bytes: textPdf(4) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    const heard = await openSubscription<{ jobStatus: { serviceRequestJob: { state: string; percentage: number } } }>(
      service,
      `subscription { jobStatus(repository: "default", jobId: "${jobId}") { serviceRequestJob { state percentage } } }`,
    );
    const job = await finishedJob(service, jobId);
    expect(job.serviceRequestJob).toMatchObject({ state: 'Done', percentage: 100 });
    const rows = await representationsOf(content.id);
    expect(rows.map((r) => [r.page, r.status])).toEqual([1, 2, 3, 4].map((n) => [n, 'READY']));
    // now() is the transaction's time: one transaction for the four
    expect(new Set(rows.map((r) => r.created_at)).size).toBe(1);
    expect((await cachedFiles(service)).filter((file) => file.includes(content.id))).toHaveLength(4);
    const listed = await call(contentUrl(service, `/content/${content.id}/representations`));
    expect(listed.body.count).toBe(4);
    // the pages' percentage (100 with the last page) reached the subscription before the job's end; none between 5 and 100: one store
    await heard.until(1000, 5_000).catch(() => undefined);
    await heard.close();
    expect(heard.events.filter((event) => !event.data), JSON.stringify(heard.events)).toEqual([]);
    const seen = heard.events.map((event) => event.data!.jobStatus.serviceRequestJob);
    expect(seen).toContainEqual({ state: 'running', percentage: 100 });
    expect(seen.filter((status) => status.percentage > 5 && status.percentage < 100)).toEqual([]);
  });

  it('a job cancelled while its pages wait stores none of them: no row, no file', { timeout: 120_000 }, async () => {
    const content = await newContent(service, { name: 'cancelled-batch.pdf', bytes: textPdf(60) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    for (const until = Date.now() + 60_000; ; await sleep(20)) {
      const running = (await jobStatus(service, jobId)).body.serviceRequestJob;
      if (running.state === 'running' && running.percentage >= 5) break;
      expect(Date.now()).toBeLessThan(until);
    }
    // some pages drawn, waiting for their store
    await sleep(500);
    const cancelled = await call(contentUrl(service, '/jobs/cancel', { jobId }), { method: 'POST' });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    // the worker's slot is free again once the job has stopped: nothing of it appears afterwards
    expect((await finishedJob(service, (await convert(service, { contentId: (await newContent(service, { name: 'after.pdf', bytes: textPdf(1) })).id })).body.jobId)).state).toBe('Done');
    expect(await representationsOf(content.id)).toEqual([]);
    expect((await cachedFiles(service)).filter((file) => file.includes(content.id))).toEqual([]);
    expect((await jobStatus(service, jobId)).body.serviceRequestJob).toMatchObject({ state: 'cancelled', percentage: 5 });
  });
});
