import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, finishedJob, jobStatus } from '../helpers/conversion.js';
import { contentUrl, newContent, newFolder } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startWorkerProcesses, type ServiceProcess } from '../helpers/process.js';
import { call, json, startTestService, subscriptionEvents, type TestService } from '../helpers/service.js';

// The REST layer runs here and takes no jobs (JOB_CONCURRENCY=0); two worker processes (ROLE=worker)
// share its database and storage and take the jobs.
let service: TestService;
let workers = new Map<string, ServiceProcess>();
const lockLifetimeMs = 3000;
const workerSettings = { JOB_LOCK_LIFETIME_MS: String(lockLifetimeMs), JOB_POLL_MS: '300', CONV_PDF_DPI: '100' };

beforeAll(async () => {
  service = await startTestService({ JOB_CONCURRENCY: '0' });
  workers = await startWorkerProcesses(service, ['worker-a', 'worker-b'], workerSettings);
}, 120_000);

/** Waits until the job runs at `percentage` or more (and is not Done yet), then SIGKILLs the worker process running it; answers its record then. */
async function killWorkerOf(jobId: string, percentage: number): Promise<Record<string, any>> {
  let running: Record<string, any>;
  for (;;) {
    running = (await jobStatus(service, jobId)).body.serviceRequestJob;
    if (running.state === 'running' && running.percentage >= percentage) break;
    expect(running.state).not.toBe('Done');
    await sleep(50);
  }
  const victim = workers.get(running.workerName)!;
  victim.child.kill('SIGKILL');
  await victim.exited;
  workers.delete(running.workerName);
  return running;
}
afterAll(async () => {
  await Promise.all([...workers.values()].map((worker) => worker.stop()));
  await service?.stop();
});

describe('workers in processes of their own (ROLE=worker)', () => {
  it('take the jobs, each under its own name', async () => {
    const contents = await Promise.all([1, 2, 3, 4].map((n) => newContent(service, { name: `w${n}.pdf`, bytes: textPdf(3) })));
    const jobIds = await Promise.all(contents.map(async (content) => (await convert(service, { contentId: content.id })).body.jobId as string));
    const finished = await Promise.all(jobIds.map((id) => finishedJob(service, id)));
    expect(finished.map((job) => job.state)).toEqual(['Done', 'Done', 'Done', 'Done']);
    const names = new Set(finished.map((job) => job.serviceRequestJob.workerName));
    for (const name of names) expect(['worker-a', 'worker-b']).toContain(name);
  });

  it('a worker killed with SIGKILL in the middle of a job: another worker finishes it, tries counted, no duplicate contents', async () => {
    const folder = await newFolder(service, 'killed');
    const content = await newContent(service, { name: 'long.pdf', bytes: textPdf(24) });
    const jobId = (await convert(service, { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'page', parentId: folder.id } })).body.jobId;
    // once some pages are done, the worker running it is killed
    const running = await killWorkerOf(jobId, 30);
    const done = await finishedJob(service, jobId, {}, 120_000);
    expect(done.state).toBe('Done');
    expect(done.serviceRequestJob.tries).toBe(2);
    expect(done.serviceRequestJob.workerName).not.toBe(running.workerName);
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 100 }));
    expect(children.body.count).toBe(24);
    expect(children.body.entries.map((e: any) => e.name).sort()).toEqual(Array.from({ length: 24 }, (_, i) => `page-${i + 1}.png`).sort());
  }, 180_000);

  it('a worker killed with SIGKILL in the middle of a MERGE: another worker merges again and creates the one merged content', async () => {
    // the killed worker's place is taken by a new one (the test above leaves one)
    if (workers.size < 2) for (const [name, worker] of await startWorkerProcesses(service, ['worker-c'], workerSettings)) workers.set(name, worker);
    const folder = await newFolder(service, 'merged after a kill');
    // ten noisy photos: pdf-lib takes about a second a page to embed and write them, time enough to be killed midway
    const photo = await sharp({ create: { width: 1200, height: 1200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    const image = await newContent(service, { name: 'noise.png', bytes: photo, mimeType: 'image/png' });
    const contentIds = Array.from({ length: 10 }, () => image.id);
    const started = await call(contentUrl(service, '/convert/merge'), json('POST', { contentIds, resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'album', parentId: folder.id } }));
    expect(started.status).toBe(200);
    // past a few inputs, before the content is created (90 %)
    const running = await killWorkerOf(started.body.jobId, 30);
    expect(running.percentage).toBeLessThan(90);
    const done = await finishedJob(service, started.body.jobId, {}, 120_000);
    expect(done.state).toBe('Done');
    expect(done.serviceRequestJob.tries).toBe(2);
    expect(done.serviceRequestJob.workerName).not.toBe(running.workerName);
    const result = JSON.parse(done.serviceRequestJob.serializedResult);
    expect(result).toMatchObject({ pages: 10, pagesPerInput: Array(10).fill(1) });
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 100 }));
    expect(children.body.entries.map((entry: any) => [entry.id, entry.name])).toEqual([[result.contentId, 'album.pdf']]);
  }, 240_000);
});

const jobSubscription = (jobId: string) =>
  `subscription { jobStatus(repository: "default", jobId: "${jobId}") { state serviceRequestJob { id state percentage workerName } } }`;

describe('subscription jobStatus(jobId) through the gateway, for a job running in a worker process', () => {
  it('graphql-ws: every state and percentage change up to the final state', async () => {
    const content = await newContent(service, { name: 'watched.pdf', bytes: textPdf(6) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    const { events, error } = await subscriptionEvents<{ jobStatus: { state: string; serviceRequestJob: { percentage: number; workerName: string } } }>(
      service,
      jobSubscription(jobId),
      1000,
      { timeoutMs: 60_000 },
    );
    expect(error).toBeUndefined();
    const seen = events.map((event) => event.data!.jobStatus);
    expect(seen.at(-1)!.state).toBe('Done');
    expect(seen.at(-1)!.serviceRequestJob.percentage).toBe(100);
    // the progress of the worker process arrived: 5 (prescan), then a step with each store of pages (the
    // pages that come within CONV_PAGE_COMMIT_MS are stored together), the last at 100 before Done
    const percentages = seen.filter((s) => s.state === 'running').map((s) => s.serviceRequestJob.percentage);
    expect(percentages).toContain(5);
    expect(percentages.at(-1)).toBe(100);
    expect([...percentages].sort((a, b) => a - b)).toEqual(percentages);
    expect([...workers.keys()]).toContain(seen.at(-1)!.serviceRequestJob.workerName);
  });

  it('SSE: the same events, ending with the final state', async () => {
    const content = await newContent(service, { name: 'sse.pdf', bytes: textPdf(2) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    const response = await fetch(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${service.adminSession}` },
      body: JSON.stringify({ query: jobSubscription(jobId) }),
    });
    expect(response.status).toBe(200);
    const text = await response.text(); // the stream ends after the final state
    const states = [...text.matchAll(/"jobStatus":\{"state":"(\w+)"/g)].map((m) => m[1]);
    expect(states.at(-1)).toBe('Done');
    expect(states.length).toBeGreaterThanOrEqual(3);
  });

  it("another user's job cannot be watched", async () => {
    const content = await newContent(service, { name: 'private.pdf', bytes: textPdf(1) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    const mallory = await service.createUserSession('mallory');
    const { events, error } = await subscriptionEvents(service, jobSubscription(jobId), 1, { session: mallory, timeoutMs: 10_000 });
    expect(error ?? events[0]?.errors).toBeDefined();
    expect(JSON.stringify(error ?? events[0]?.errors)).toContain('not found');
  });
});
