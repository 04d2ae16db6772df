import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, sql } from '../helpers/entries.js';
import { buildPdf, textPage } from '../helpers/pdf.js';
import { startWorkerProcesses, type ServiceProcess } from '../helpers/process.js';
import { call, startTestService, type TestService } from '../helpers/service.js';

// The REST layer runs here and takes no jobs; two worker processes (ROLE=worker) take the extraction jobs.
let service: TestService;
let workers = new Map<string, ServiceProcess>();

beforeAll(async () => {
  service = await startTestService({ JOB_CONCURRENCY: '0' });
  workers = await startWorkerProcesses(service, ['text-worker-a', 'text-worker-b'], { JOB_LOCK_LIFETIME_MS: '3000', JOB_POLL_MS: '300' });
}, 120_000);
afterAll(async () => {
  await Promise.all([...workers.values()].map((worker) => worker.stop()));
  await service?.stop();
});

describe('text extraction in worker processes', () => {
  it('a worker killed with SIGKILL during an extraction leaves no text; another worker runs the job again and stores it whole, once', async () => {
    const pages = Array.from({ length: 400 }, (_, p) => textPage(Array.from({ length: 20 }, (_, l) => `page ${p + 1} line ${l + 1} ${p === 399 && l === 19 ? 'lastpageword' : 'filler'}`)));
    const content = await newContent(service, { name: 'killed.pdf', bytes: buildPdf(pages), mimeType: 'application/pdf' });
    const jobOf = async () =>
      (await sql<{ state: string; worker_name: string | null; tries: number }>(service, `select state, worker_name, tries from service_job where job_name = 'extractText' and ? = any(content_ids)`, [content.id]))[0];
    let running;
    for (;;) {
      running = await jobOf();
      if (running?.state === 'running' && running.worker_name) break;
      expect(running?.state).not.toBe('Done');
      await sleep(20);
    }
    const victim = workers.get(running.worker_name!)!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    workers.delete(running.worker_name!);
    const textRows = () => sql(service, `select t.text from resource_text t join entry e on e.resource_id = t.resource_id where e.id = ?`, [content.id]);
    expect(await textRows()).toEqual([]);

    const until = Date.now() + 90_000;
    let job;
    do {
      await sleep(200);
      job = await jobOf();
    } while (job?.state !== 'Done' && job?.state !== 'panic' && Date.now() < until);
    expect(job).toMatchObject({ state: 'Done', tries: 2 });
    expect(job!.worker_name).not.toBe(running.worker_name);
    const rows = await textRows();
    expect(rows).toHaveLength(1);
    expect(String(rows[0]!.text)).toContain('lastpageword');
    const found = await call(contentUrl(service, '/content/search/by-text', { searchText: 'lastpageword' }));
    expect(found.body).toMatchObject({ count: 1, entries: [{ id: content.id }] });
  }, 180_000);
});
