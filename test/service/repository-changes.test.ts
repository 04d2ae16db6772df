import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, finishedJob } from '../helpers/conversion.js';
import { contentUrl, newContent, sql } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startSecondProcess, type ServiceProcess } from '../helpers/process.js';
import { call, json, startTestService, type TestService } from '../helpers/service.js';

// Two processes on one database: A (here, JOB_CONCURRENCY=0: it takes no jobs) where the administrator
// changes repositories, and B (its own process, its own storage) where clients work and jobs run. Each
// keeps repository records cached for 5 s; B must follow A's changes well within that.
let a: TestService;
let b: ServiceProcess;
const cacheTtlMs = 5_000;
/** how long B may take to follow a change: well under the cache's time to live, with room for a loaded machine */
const followBoundMs = 2_000;

beforeAll(async () => {
  a = await startTestService({ JOB_CONCURRENCY: '0' });
  b = await startSecondProcess(a, { JOB_CONCURRENCY: '1', CONV_PDF_DPI: '72' });
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const adminUrl = (base: string, route: string, query: Record<string, string> = {}) => `${base}/api/v1/access.svc.admin/v1${route}?${new URLSearchParams({ ...query, sessionId: a.adminSession })}`;
const contentBaseOf = (base: string, repository: string) => `${base}/api/v1/access.svc.content.${repository}/v1`;

async function newRepository(name: string): Promise<void> {
  const created = await call(adminUrl(a.baseUrl, '/repository'), json('POST', { name }));
  expect(created.status).toBe(201);
}
/** PATCH A/repository/limits in process A. */
async function patchLimitsInA(name: string, body: Record<string, unknown>): Promise<void> {
  const patched = await call(adminUrl(a.baseUrl, '/repository/limits', { repositoryId: `svc.repository.${name}` }), json('PATCH', body));
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
}
/** Milliseconds until `seen()` holds in process B, polled; fails after the cache's time to live. */
async function followedWithin(seen: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await seen())) {
    if (Date.now() - start > cacheTtlMs + 1_000) throw new Error('process B did not follow the change');
    await sleep(20);
  }
  return Date.now() - start;
}
/** The last statement of a process's listener connection, as pg_stat_activity shows it. */
/** the listener connection of a process: its one statement listens to every channel, repository_changed among them (this query itself does not start with listen) */
const listenQuery = `'listen %repository_changed%'`;
const byTextInB = (repository: string) => call(contentUrl(a, '/content/search/by-text', { searchText: 'anything' }, a.adminSession, contentBaseOf(b.baseUrl, repository)));
const recordInB = async (repository: string) => (await call(adminUrl(b.baseUrl, '/repository/by-name', { repositoryName: repository }))).body;

describe('repository changes reach every process at once (repository_changed NOTIFY)', () => {
  it('B follows A: fullTextEnabled and limits, both ways, well within the 5 s cache', async () => {
    await newRepository('follow');
    // B reads the record now: its cached copy would last the whole 5 s
    expect((await recordInB('follow')).fullTextEnabled).toBe(true);
    expect((await byTextInB('follow')).status).toBe(200);

    await patchLimitsInA('follow', { fullTextEnabled: false, maxInputFileSize: 1000 });
    const off = await followedWithin(async () => (await byTextInB('follow')).status === 409);
    expect((await recordInB('follow')).limits.maxInputFileSize).toBe(1000);

    await patchLimitsInA('follow', { fullTextEnabled: true, maxInputFileSize: null });
    const on = await followedWithin(async () => (await byTextInB('follow')).status === 200);
    expect((await recordInB('follow')).limits.maxInputFileSize).toBeNull();
    expect(off).toBeLessThan(followBoundMs);
    expect(on).toBeLessThan(followBoundMs);
  });

  it('a change made by plain SQL is announced too (the trigger on the repository table)', async () => {
    await newRepository('bysql');
    expect((await byTextInB('bysql')).status).toBe(200);
    await sql(a, `update repository set full_text_enabled = false where name = 'bysql'`);
    expect(await followedWithin(async () => (await byTextInB('bysql')).status === 409)).toBeLessThan(followBoundMs);
  });

  it('a conversion started in B right after a limit change in A obeys the new limit', async () => {
    await newRepository('convlimits');
    const base = contentBaseOf(b.baseUrl, 'convlimits');
    // uploaded through B: B holds the record (no limits) in its cache
    const content = await newContent(a, { name: 'one.pdf', bytes: textPdf(1), base });
    await patchLimitsInA('convlimits', { maxInputFileSize: 10 });
    const limited = await convert(a, { contentId: content.id }, { base });
    expect(limited.status).toBe(200);
    const failed = await finishedJob(a, limited.body.jobId, { base });
    expect(failed).toMatchObject({ state: 'panic', serviceRequestJob: { reasonCode: 'illegalArguments' } });
    expect(failed.serviceRequestJob.errorMessage).toContain('above the job-based maximum 10');

    await patchLimitsInA('convlimits', { maxInputFileSize: null });
    const unlimited = await convert(a, { contentId: content.id }, { base });
    expect((await finishedJob(a, unlimited.body.jobId, { base })).state).toBe('Done');
  }, 120_000);

  it('after a lost listener connection, B forgets its cached records once it listens again (notifications missed meanwhile)', async () => {
    await newRepository('gap');
    expect((await byTextInB('gap')).status).toBe(200);
    // every process's repository listener loses its connection; the change is announced to nobody
    const killed = await sql(a, `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like ${listenQuery}`);
    expect(killed.length, 'listeners stopped').toBe(2);
    await patchLimitsInA('gap', { fullTextEnabled: false });
    // the listener reconnects after 1 s; without forgetting, B would answer from its cache for 5 s
    expect(await followedWithin(async () => (await byTextInB('gap')).status === 409)).toBeLessThan(followBoundMs + 1_000);
    // both listen again (A's may come back a moment after B's)
    await followedWithin(async () => (await sql(a, `select pid from pg_stat_activity where datname = current_database() and query like ${listenQuery}`)).length === 2);
  });
});
