import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';
import { convert, finishedJob, jobStatus } from '../helpers/conversion.js';
import { contentUrl, newContent, newFolder } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { adminPassword, call, startTestService, type TestService } from '../helpers/service.js';

// The REST layer runs here and takes no jobs (JOB_CONCURRENCY=0); two worker processes (ROLE=worker)
// share its database and storage and take the jobs.
let service: TestService;
const workers = new Map<string, ServiceProcess>();
const lockLifetimeMs = 3000;

beforeAll(async () => {
  service = await startTestService({ JOB_CONCURRENCY: '0' });
  for (const name of ['worker-a', 'worker-b']) {
    workers.set(
      name,
      await startServiceProcess({
        ROLE: 'worker',
        WORKER_NAME: name,
        PORT: String(await freePort()),
        DATABASE_URL: service.config.DATABASE_URL!,
        DATA_DIR: service.dataDir,
        CONTENT_STORAGE_PATH: service.config.contentStoragePath,
        CACHE_STORAGE_PATH: service.config.cacheStoragePath,
        ADMIN_PASSWORD: adminPassword,
        JOB_CONCURRENCY: '1',
        JOB_LOCK_LIFETIME_MS: String(lockLifetimeMs),
        JOB_POLL_MS: '300',
        CONV_PDF_DPI: '100',
        LOG_LEVEL: 'warn',
      }),
    );
  }
}, 120_000);
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
    // wait until some pages are done, then kill the worker running it
    let running: Record<string, any>;
    for (;;) {
      running = (await jobStatus(service, jobId)).body.serviceRequestJob;
      if (running.state === 'running' && running.percentage >= 30) break;
      expect(running.state).not.toBe('Done');
      await sleep(50);
    }
    const victim = workers.get(running.workerName)!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    workers.delete(running.workerName);
    const done = await finishedJob(service, jobId, {}, 120_000);
    expect(done.state).toBe('Done');
    expect(done.serviceRequestJob.tries).toBe(2);
    expect(done.serviceRequestJob.workerName).not.toBe(running.workerName);
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 100 }));
    expect(children.body.count).toBe(24);
    expect(children.body.entries.map((e: any) => e.name).sort()).toEqual(Array.from({ length: 24 }, (_, i) => `page-${i + 1}.png`).sort());
  }, 180_000);
});
