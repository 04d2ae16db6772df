import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedJob } from '../../../test/helpers/conversion.js';
import { contentUrl, newContent, sql } from '../../../test/helpers/entries.js';
import { buildPdf } from '../../../test/helpers/pdf.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

// One job at a time; every extraction of the PDF below reaches its 1.5 s deadline, longer than the
// queue's lock lifetime (1 s): a job that did not renew its lock would be taken again and run twice.
let service: TestService;
let base: string;
let ann: string;
let ben: string;
/** Ten pages of 400,000 empty text runs each (200 KB): reading one page takes over a second, so each extraction ends at its deadline */
const slowPdf = (() => {
  const content = Buffer.from('BT /F1 11 Tf () Tj ET\n'.repeat(400_000), 'latin1');
  return buildPdf(Array.from({ length: 10 }, () => ({ content })));
})();
const annsResources: string[] = [];

beforeAll(async () => {
  service = await startTestService({ JOB_CONCURRENCY: '1', FULLTEXT_EXTRACT_TIMEOUT_MS: '1500', JOB_LOCK_LIFETIME_MS: '1000', FULLTEXT_SWEEP_MS: '500' });
  [ann, ben] = [await service.createUserSession('ann'), await service.createUserSession('ben')];
  expect((await service.graphql('mutation { createRepository(input: { name: "turns", fullTextEnabled: false }) { id } }')).errors).toBeUndefined();
  base = `${service.baseUrl}/api/v1/access.svc.content.turns/v1`;
}, 120_000);
afterAll(() => service?.stop());

const reindex = (query: Record<string, string> = {}) => call(contentUrl(service, '/reindex', query, service.adminSession, base), { method: 'POST' });

const ended = async (jobId: string) => (await finishedJob(service, jobId, { base }, 90_000)).serviceRequestJob;

describe('text extraction takes turns between uploaders', () => {
  it("one uploader's hostile files do not hold the extraction slot against another's one-line text", { timeout: 180_000 }, async () => {
    // ann's eight slow PDFs (12 s of extraction), queued for one extraction job of hers (as after a crash: the sweep submits it)
    for (let i = 0; i < 8; i++) annsResources.push((await newContent(service, { name: `slow-${i}.pdf`, bytes: slowPdf, session: ann, base })).resource.id);
    await sql(service, `update repository set full_text_enabled = true where name = 'turns'`);
    service.services.repositories.forget('turns');
    await sql(
      service,
      `insert into text_extraction_queue (resource_id, repository_id, queued_at, uploader)
         select id, repository_id, now() - interval '10 seconds', 'ann' from resource where id in (select jsonb_array_elements_text(?::jsonb))`,
      [JSON.stringify(annsResources)],
    );
    for (const until = Date.now() + 30_000; (await sql(service, `select 1 from service_job where owner = 'ann' and state = 'running'`)).length === 0; await sleep(50)) {
      expect(Date.now()).toBeLessThan(until);
    }
    const bens = await newContent(service, { name: 'one-line.txt', bytes: 'benword in one line', mimeType: 'text/plain', session: ben, base });
    const failedAt = async () =>
      sql<{ failed_at: Date; reason_code: string }>(service, `select failed_at, reason_code from resource_text_failure where resource_id in (select jsonb_array_elements_text(?::jsonb))`, [
        JSON.stringify(annsResources),
      ]);
    for (const until = Date.now() + 150_000; (await failedAt()).length < 8; await sleep(200)) expect(Date.now()).toBeLessThan(until);
    const [text] = await sql<{ extracted_at: Date }>(service, `select extracted_at from resource_text where resource_id = ?`, [bens.resource.id]);
    expect(text, 'ben’s text is stored').toBeDefined();
    const [bensJob] = await sql<{ created_at: Date }>(service, `select created_at from service_job where job_name = 'extractText' and owner = 'ben'`);
    const failures = await failedAt();
    expect(failures.map((f) => f.reason_code)).toEqual(Array(8).fill('extractionTimeout'));
    // ben's text waited for the extraction under way when its job came (and the poll that took it), not for ann's others
    const between = failures.filter((f) => f.failed_at > bensJob!.created_at && f.failed_at < text!.extracted_at);
    expect(between.length).toBeLessThanOrEqual(2);
    expect(failures.filter((f) => f.failed_at > text!.extracted_at).length).toBeGreaterThanOrEqual(1);
    const byText = await call(contentUrl(service, '/content/search/by-text', { searchText: 'benword' }, ben, base));
    expect(byText.body).toMatchObject({ count: 1, entries: [{ id: bens.id }] });
    // ann's job gave its turn up and went on after ben's: one job, every resource listed once
    const [annsJob] = await sql<{ state: string; tries: number; serialized_result: any; reason_code: string }>(
      service,
      `select state, tries, serialized_result, reason_code from service_job where job_name = 'extractText' and owner = 'ann'`,
    );
    expect(annsJob).toMatchObject({ state: 'panic', reason_code: 'extractionTimeout' });
    expect(annsJob!.tries).toBeGreaterThanOrEqual(2);
  });
});

describe('POST C/reindex: one per repository at a time; failed resources passed over unless forced', () => {
  it('force=true tries them again; every call while it runs (REST or GraphQL, forced or not) answers its id; an extraction longer than the lock lifetime runs once', { timeout: 120_000 }, async () => {
    const forced = await reindex({ force: 'true' });
    expect(forced.status, JSON.stringify(forced.body)).toBe(200);
    const meanwhile = await Promise.all([
      ...Array.from({ length: 4 }, () => reindex()),
      reindex({ force: 'true' }),
      service.graphql<{ reindex: { jobId: string } }>('mutation { reindex(repository: "turns", force: false) { jobId } }').then((answer) => ({ status: 200, body: answer.data?.reindex })),
    ]);
    expect(meanwhile.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(meanwhile.map((answer) => answer.body!.jobId)).toEqual(Array(6).fill(forced.body.jobId));
    const job = await ended(forced.body.jobId);
    expect(job).toMatchObject({ state: 'Done', tries: 1, requestSelectiveInformation: 'force=true' });
    const result = JSON.parse(job.serializedResult);
    expect(result).toMatchObject({ indexed: 0, passedOver: 0 });
    expect(result.failed.map((f: { resourceId: string }) => f.resourceId).sort()).toEqual([...annsResources].sort());
    expect(result.failed.map((f: { reasonCode: string }) => f.reasonCode)).toEqual(Array(8).fill('extractionTimeout'));
    expect(await sql(service, `select id from service_job where job_name = 'reindexText' and repository_id = 'svc.repository.turns'`)).toHaveLength(1);
  });

  it('without force, the resources whose extraction failed for reasons of their own are passed over (and counted)', { timeout: 60_000 }, async () => {
    const started = await reindex();
    expect(started.status).toBe(200);
    const job = await ended(started.body.jobId);
    expect(job.state).toBe('Done');
    expect(JSON.parse(job.serializedResult)).toEqual({ indexed: 0, failed: [], passedOver: 8 });
    const refused = await call(contentUrl(service, '/reindex', { force: 'maybe' }, service.adminSession, base), { method: 'POST' });
    expect(refused).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
  });
});
