import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedFiles, newContent, newFolder, sql } from '../../../test/helpers/entries.js';
import { finishedJob } from '../../../test/helpers/conversion.js';
import { textPdf } from '../../../test/helpers/pdf.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';
import { deepCheck, type DeepCheckResult } from './deep-check.js';
import { findDeepCheckReport, renderDeepCheckReport, reportsKeptPerRepository, saveDeepCheckReport } from './deep-check-reports.js';

let service: TestService;
let userSession: string;

/** GET A/repository/<kind>/<path>?sessionId=…&<key>=…, as the spec writes endpoints 11 and 12. */
const adminGet = (route: string, query: Record<string, string>, session: string | null = service.adminSession) => {
  const params = new URLSearchParams(query);
  if (session !== null) params.set('sessionId', session);
  return call(`${service.adminBase}/${route}?${params}`);
};
/** The report at `reportUrl` (relative to the service's origin), with the session as every endpoint takes it. */
const getReport = (reportUrl: string, session: string | null = service.adminSession) =>
  fetch(`${new URL(service.baseUrl).origin}${reportUrl}${session === null ? '' : `?sessionId=${session}`}`);

/** Everything the repository holds, row by row: a deep check must leave it as it found it. */
const entriesOf = (repository: string) =>
  sql(service, `select id, name, version, active, tags, properties, locked_by, parent_id from entry where repository_id = ? order by id`, [`svc.repository.${repository}`]);

const scenarioOrder = [
  ['1. Get home', ['GET HOME']],
  ['2. Upload', ['CREATE CONTENT']],
  ['3. Create folder', ['CREATE FOLDER']],
  ['4. Tagging', ['ADD TAG']],
  ['5. Search', ['SEARCH BY PARENT ID AND/OR TAG']],
  ['6. Copy', ['COPY CONTENT']],
  ['7. Update', ['UPDATE CONTENT', 'UPDATE FOLDER', 'DELETE TAG']],
  ['8. Convert', ['CONVERT CONTENT TO IMAGES']],
  ['9. Get conversion result', ['GET CONVERTED IMAGES']],
  ['10. Full text search', ['ELASTIC SEARCH']],
  ['11. Check-out', ['CHECK-OUT CONTENT']],
  ['12. Check-in', ['CHECK-IN CONTENT']],
  ['13. Download', ['DOWNLOAD CONTENT']],
  ['14. Get', ['GET CONTENT BY CONTENT ID']],
  ['15. Delete content', ['DELETE CONTENT']],
  ['16. Delete folder', ['DELETE FOLDER']],
] as const;

type Scenario = DeepCheckResult['test']['listFeatures'][number]['listScenarios'][number];
const scenariosOf = (result: DeepCheckResult) => result.test.listFeatures.flatMap((feature) => feature.listScenarios);
const statusOf = (result: DeepCheckResult, name: string) => scenariosOf(result).find((s) => s.scenarioName === name)?.status;

beforeAll(async () => {
  service = await startTestService();
  userSession = await service.createUserSession('frida');
  const created = await Promise.all([
    call(`${service.adminBase}/repository?sessionId=${service.adminSession}`, json('POST', { name: 'second', technicalName: 'second_tech', fullTextEnabled: false })),
    // a real limit that refuses the deep check's PDF (it is larger than 100 bytes): its conversion fails
    call(`${service.adminBase}/repository?sessionId=${service.adminSession}`, json('POST', { name: 'strict', limits: { maxInputFileSize: 100 } })),
  ]);
  expect(created.map((answer) => answer.status)).toEqual([201, 201]);
  // something the checks must leave alone
  await newContent(service, { name: 'kept.txt', tags: ['kept'] });
});
afterAll(() => service?.stop());

describe('synchronous deep check (spec endpoint 11)', () => {
  it('answers a DeepHealthCheckResponse field by field, every scenario passed, the repository as it was', { timeout: 120_000 }, async () => {
    const before = await entriesOf('default');
    const cacheBefore = await cachedFiles(service);
    const { status, body } = await adminGet('repository/deep-check/by-id', { repositoryId: 'svc.repository.default' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      _type: 'svc.model.deployment.service.repository.DeepHealthCheckResponse',
      _id: expect.any(String),
      checkStatus: 'ok',
      duration: expect.any(Number),
      elapsedTimeInMs: expect.any(Number),
      message: expect.stringContaining('default'),
      reportUrl: `/api/v1/access.svc.admin/v1/repository/deep-check/report/${body._id}`,
      testName: expect.stringContaining('default'),
      testDescription: expect.any(String),
      testTime: expect.stringMatching(/^\d{4}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{2}$/),
      test: {
        accessId: 'access.svc.content.default',
        code: 'success',
        reportLocation: body.reportUrl,
        testName: body.testName,
        testDescription: body.testDescription,
        testTime: body.testTime,
      },
    });
    expect(body.test.listFeatures.map((f: { featureName: string; listScenarios: Scenario[] }) => [f.featureName, f.listScenarios.map((s) => s.scenarioName)])).toEqual(scenarioOrder);
    for (const scenario of scenariosOf(body)) {
      expect(scenario, scenario.scenarioName).toMatchObject({ status: 'passed', errorMessage: null, duration: expect.any(Number), scenarioDescription: expect.any(String) });
    }
    expect(await entriesOf('default')).toEqual(before);
    expect(await cachedFiles(service)).toEqual(cacheBefore);
  });

  it('by name and by technical name; with full text disabled its scenario is skipped and the check is ok', { timeout: 120_000 }, async () => {
    for (const [route, query] of [
      ['by-name', { repositoryName: 'second' }],
      ['by-technical-name', { repositoryTechnicalName: 'second_tech' }],
    ] as const) {
      const { status, body } = await adminGet(`repository/deep-check/${route}`, query);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.checkStatus, body.message).toBe('ok');
      expect(body.test.accessId).toBe('access.svc.content.second');
      const fullText = scenariosOf(body).find((s) => s.scenarioName === 'ELASTIC SEARCH')!;
      expect(fullText).toMatchObject({ status: 'skipped', errorMessage: "full text is disabled for repository 'second'" });
      expect(scenariosOf(body).filter((s) => s.status !== 'passed').map((s) => s.scenarioName)).toEqual(['ELASTIC SEARCH']);
    }
    expect(await entriesOf('second')).toEqual([]);
  });

  it('passes on a repository whose root ACL is narrowed to nobody (it runs as the administrator who asks, DESIGN §10)', { timeout: 120_000 }, async () => {
    const created = await call(`${service.adminBase}/repository?sessionId=${service.adminSession}`, json('POST', { name: 'narrowed' }));
    expect(created.status).toBe(201);
    const narrowed = await call(`${service.adminBase}/repository/acl?repositoryId=svc.repository.narrowed&sessionId=${service.adminSession}`, json('PUT', { entries: [] }));
    expect(narrowed.status).toBe(200);
    const { status, body } = await adminGet('repository/deep-check/by-name', { repositoryName: 'narrowed' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.checkStatus, body.message).toBe('ok');
    expect(scenariosOf(body).filter((s) => s.status !== 'passed').map((s) => s.scenarioName)).toEqual([]);
    expect(await entriesOf('narrowed')).toEqual([]);
  });

  it('names the failing scenario when one fails for real (a repository limit refuses the conversion), and still removes its scratch folder', { timeout: 120_000 }, async () => {
    const { status, body } = await adminGet('repository/deep-check/by-name', { repositoryName: 'strict' });
    expect(status).toBe(200);
    expect(body.checkStatus).toBe('failed');
    expect(body.test.code).toBe('failure');
    expect(body.message).toContain('CONVERT CONTENT TO IMAGES');
    const conversion = scenariosOf(body).find((s) => s.scenarioName === 'CONVERT CONTENT TO IMAGES')!;
    expect(conversion.status).toBe('failed');
    expect(conversion.errorMessage).toMatch(/ended in panic: the size of input resource deep-check\.pdf \(\d+\) is either unknown, zero, above the job-based maximum 100/);
    expect(statusOf(body, 'GET CONVERTED IMAGES')).toBe('skipped');
    expect(scenariosOf(body).filter((s) => s.status === 'failed').map((s) => s.scenarioName)).toEqual(['CONVERT CONTENT TO IMAGES']);
    expect(body.test.listFeatures.find((f: { featureName: string }) => f.featureName === '8. Convert').status).toBe('failed');
    expect(await entriesOf('strict')).toEqual([]);

    const report = await getReport(body.reportUrl);
    const html = await report.text();
    expect(html).toContain('CONVERT CONTENT TO IMAGES');
    expect(html).toContain('class="failed">failed');
    expect(html).toContain('above the job-based maximum 100');
  });

  it("removes the scratch folder of a run whose process died (older than any run lasts), not a younger one's", { timeout: 120_000 }, async () => {
    const base = `${service.baseUrl}/api/v1/access.svc.content.second/v1`;
    const abandoned = await newFolder(service, 'deep-check-2020.01.01.00.00.00-dc0123456789ab', undefined, undefined, base);
    await newContent(service, { name: 'left.pdf', parentId: abandoned.id, base });
    await sql(service, `update entry set created_at = now() - interval '1 day' where id = ?`, [abandoned.id]);
    const running = await newFolder(service, 'deep-check-2020.01.01.00.00.01-dc0123456789ac', undefined, undefined, base);
    try {
      const { status, body } = await adminGet('repository/deep-check/by-name', { repositoryName: 'second' });
      expect(status).toBe(200);
      expect(body.checkStatus, body.message).toBe('ok');
      expect((await entriesOf('second')).map((entry) => entry['id'])).toEqual([running.id]);
    } finally {
      await sql(service, `delete from entry where id = ?`, [running.id]);
    }
  });

  it('removes its scratch folder when its deadline cuts it off', { timeout: 60_000 }, async () => {
    const em = service.services.orm.em.fork() as EntityManager;
    const repository = await service.services.repositories.find({ em }, 'second');
    // shorter and shorter deadlines (how far a run gets depends on the machine's speed) until one cuts
    // a run off after it made its scratch folder and content: what is left fails on the deadline
    let cutAfterUpload = false;
    for (let timeoutMs = 1_600; timeoutMs >= 10 && !cutAfterUpload; timeoutMs = Math.floor(timeoutMs / 2)) {
      const result = await deepCheck(service.services, { userName: 'admin', roles: ['ADMIN'], groups: [] }, repository, { timeoutMs, waitMs: timeoutMs });
      expect(await entriesOf('second'), `after a run with a ${timeoutMs} ms deadline`).toEqual([]);
      if (result.checkStatus === 'ok') continue;
      expect(result.message).toMatch(/deadline/);
      expect(statusOf(result, 'DELETE FOLDER')).not.toBe('passed');
      cutAfterUpload = statusOf(result, 'CREATE CONTENT') === 'passed';
    }
    expect(cutAfterUpload, 'a run cut off after its upload').toBe(true);
  });

  it('two deep checks of the same repository at once: one runs, the other is a 409 naming it; its result at A/jobs/status; the repository as it was', { timeout: 180_000 }, async () => {
    const before = await entriesOf('default');
    const answers = await Promise.all([
      adminGet('repository/deep-check/by-name', { repositoryName: 'default' }),
      adminGet('repository/deep-check/by-id', { repositoryId: 'svc.repository.default' }),
    ]);
    const ran = answers.find((answer) => answer.status === 200)!;
    const refused = answers.find((answer) => answer.status === 409)!;
    expect(ran.body.checkStatus, ran.body.message).toBe('ok');
    expect(refused.body).toMatchObject({ reasonCode: 'conflict', message: expect.stringMatching(/^a deep check of repository 'default' is running \(job [0-9a-f-]{36}\)/) });
    const jobId = refused.body.details.replace('jobId=', '');
    const job = await finished(jobId);
    expect(job.serviceRequestJob).toMatchObject({ conversionType: 'DEEP_CHECK', state: 'Done', requestTypeSignature: 'GET /v1/repository/deep-check' });
    expect(JSON.parse(job.serviceRequestJob.serializedResult)).toMatchObject({ checkStatus: 'ok', reportId: ran.body._id });
    expect(await entriesOf('default')).toEqual(before);
  });

  it('answers 404 for an unknown repository, 400 for a malformed or missing key, 403 for a user and 401 without a session', async () => {
    for (const route of ['deep-check', 'async-deep-check']) {
      expect((await adminGet(`repository/${route}/by-id`, { repositoryId: 'svc.repository.nowhere' })).status).toBe(404);
      expect((await adminGet(`repository/${route}/by-name`, { repositoryName: 'nowhere' })).status).toBe(404);
      expect((await adminGet(`repository/${route}/by-technical-name`, { repositoryTechnicalName: 'nowhere' })).status).toBe(404);
      const malformed = await adminGet(`repository/${route}/by-id`, { repositoryId: 'second' });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', reasonCode: 'illegalArguments' });
      expect((await adminGet(`repository/${route}/by-id`, {})).status).toBe(400);
      expect((await adminGet(`repository/${route}/by-id`, { repositoryId: 'svc.repository.second' }, userSession)).status).toBe(403);
      expect((await adminGet(`repository/${route}/by-id`, { repositoryId: 'svc.repository.second' }, null)).status).toBe(401);
    }
  });
});

describe('the report at reportUrl', () => {
  it('is a self-contained HTML page for administrators', { timeout: 120_000 }, async () => {
    const { body } = await adminGet('repository/deep-check/by-name', { repositoryName: 'second' });
    const page = await getReport(body.reportUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<style>');
    // nothing loaded from elsewhere, no scripts
    expect(html).not.toMatch(/<script|<link|src=|href=|@import|url\(/i);
    for (const [feature, scenarios] of scenarioOrder) {
      expect(html).toContain(feature);
      for (const scenario of scenarios) expect(html).toContain(scenario);
    }
    expect(html).toContain(body.testTime);

    // Bearer works too; a user, no session, an unknown or malformed id do not
    const id = body._id as string;
    const origin = new URL(service.baseUrl).origin;
    expect((await fetch(`${origin}${body.reportUrl}`, { headers: { authorization: `Bearer ${service.adminSession}` } })).status).toBe(200);
    expect((await getReport(body.reportUrl, userSession)).status).toBe(403);
    expect((await getReport(body.reportUrl, null)).status).toBe(401);
    expect((await getReport(body.reportUrl.replace(id, '00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    expect((await getReport(body.reportUrl.replace(id, 'not-a-report'))).status).toBe(400);
  });

  it('keeps the newest 20 of a repository; older ones are a 404', { timeout: 60_000 }, async () => {
    const em = () => service.services.orm.em.fork() as EntityManager;
    const repository = await service.services.repositories.find({ em: em() }, 'second');
    const template = await deepCheck(service.services, { userName: 'admin', roles: ['ADMIN'], groups: [] }, repository, { timeoutMs: 1, waitMs: 1 });
    const ids = Array.from({ length: reportsKeptPerRepository + 2 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const id of ids) await saveDeepCheckReport(em(), repository.id, { ...template, _id: id });
    const kept = await sql<{ id: string }>(service, 'select id from deep_check_report where repository_id = ? order by created_at, id', [repository.id]);
    expect(kept.map((row) => row.id)).toEqual(ids.slice(-reportsKeptPerRepository));
    await expect(findDeepCheckReport(em(), ids[1]!)).rejects.toMatchObject({ reasonCode: 'notFound' });
    expect((await findDeepCheckReport(em(), ids.at(-1)!))._id).toBe(ids.at(-1));
    // other repositories keep theirs
    expect((await sql<{ count: number }>(service, `select count(*)::int as count from deep_check_report where repository_id = 'svc.repository.default'`))[0]!.count).toBeGreaterThan(0);
  });

  it('escapes the error text', () => {
    const html = renderDeepCheckReport({
      _id: 'r',
      checkStatus: 'failed',
      duration: 1,
      elapsedTimeInMs: 1,
      message: 'failed: <b>',
      reportUrl: '/r',
      testName: 'Deep health check',
      testDescription: 'd',
      testTime: '2026.11.23.01.00.00',
      test: {
        accessId: 'a',
        code: 'failure',
        reportLocation: '/r',
        testName: 'Deep health check',
        testDescription: 'd',
        testTime: '2026.11.23.01.00.00',
        listFeatures: [
          {
            featureName: '1. Get home',
            featureDescription: 'd',
            status: 'failed',
            duration: 1,
            listScenarios: [{ scenarioName: 'GET HOME', scenarioDescription: 'd', status: 'failed', duration: 1, errorMessage: `<script>alert("x")</script> & 'y'` }],
          },
        ],
      },
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;');
    expect(html).toContain('failed: &lt;b&gt;');
  });
});

/** A/jobs/status until the job ends. */
async function finished(jobId: string) {
  for (const until = Date.now() + 120_000; Date.now() < until; ) {
    const { status, body } = await adminGet('jobs/status', { jobId });
    expect(status, JSON.stringify(body)).toBe(200);
    if (['Done', 'panic', 'cancelled'].includes(body.state)) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`job ${jobId} did not end`);
}

describe('asynchronous deep check (spec endpoint 12) and A/jobs/status', () => {

  it('answers the job id at once; the job ends Done with the check status and the report URL', { timeout: 180_000 }, async () => {
    const before = await entriesOf('default');
    const { status, body } = await adminGet('repository/async-deep-check/by-id', { repositoryId: 'svc.repository.default' });
    expect(status).toBe(200);
    expect(body).toEqual({ _type: 'svc.model.deployment.service.AdxAdminResponse', _id: expect.any(String), duration: expect.any(Number) });
    const job = await finished(body._id);
    expect(job).toMatchObject({
      _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse',
      state: 'Done',
      serviceRequestJob: { id: body._id, conversionType: 'DEEP_CHECK', clientUsername: 'admin', state: 'Done', percentage: 100 },
    });
    const result = JSON.parse(job.serviceRequestJob.serializedResult);
    expect(result).toMatchObject({ checkStatus: 'ok', reportUrl: expect.stringMatching(/^\/api\/v1\/access\.svc\.admin\/v1\/repository\/deep-check\/report\//) });
    expect((await getReport(result.reportUrl)).status).toBe(200);
    expect(await entriesOf('default')).toEqual(before);
  });

  it('by name and by technical name; a failing scenario shows in the result', { timeout: 180_000 }, async () => {
    const byName = await adminGet('repository/async-deep-check/by-name', { repositoryName: 'strict' });
    const byTechnicalName = await adminGet('repository/async-deep-check/by-technical-name', { repositoryTechnicalName: 'second_tech' });
    const [strict, second] = await Promise.all([finished(byName.body._id), finished(byTechnicalName.body._id)]);
    expect(JSON.parse(strict.serviceRequestJob.serializedResult)).toMatchObject({ checkStatus: 'failed', message: expect.stringContaining('CONVERT CONTENT TO IMAGES') });
    expect(JSON.parse(second.serviceRequestJob.serializedResult)).toMatchObject({ checkStatus: 'ok' });
  });

  it('while one is pending or running, a start answers its id (no new job) and a synchronous check is a 409 naming it', { timeout: 180_000 }, async () => {
    const starts = await Promise.all(Array.from({ length: 3 }, () => adminGet('repository/async-deep-check/by-name', { repositoryName: 'second' })));
    expect(starts.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const [jobId] = new Set(starts.map((answer) => answer.body._id as string));
    expect(starts.map((answer) => answer.body._id)).toEqual([jobId, jobId, jobId]);
    const now = await adminGet('repository/deep-check/by-name', { repositoryName: 'second' });
    expect(now).toMatchObject({ status: 409, body: { reasonCode: 'conflict', details: `jobId=${jobId}`, message: expect.stringContaining(`A/jobs/status?jobId=${jobId}`) } });
    expect((await finished(jobId!)).state).toBe('Done');
    // once it has ended, a start makes a new job
    const again = await adminGet('repository/async-deep-check/by-name', { repositoryName: 'second' });
    expect(again.body._id).not.toBe(jobId);
    await finished(again.body._id);
  });

  it('A/jobs/status: 404 for an unknown job and for a job of the content domain, 403 for a user, 401 without a session', async () => {
    expect((await adminGet('jobs/status', { jobId: 'nowhere' })).status).toBe(404);
    const content = await newContent(service, { name: 'to-convert.png', bytes: Buffer.from('not really a png') });
    const conversion = await call(`${service.contentBase}/convert/image?sessionId=${service.adminSession}`, json('POST', { contentId: content.id, resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png' }));
    expect(conversion.status).toBe(200);
    expect((await adminGet('jobs/status', { jobId: conversion.body.jobId })).status).toBe(404);
    expect((await adminGet('jobs/status', {})).status).toBe(400);
    const job = await adminGet('repository/async-deep-check/by-name', { repositoryName: 'second' });
    expect((await adminGet('jobs/status', { jobId: job.body._id }, userSession)).status).toBe(403);
    expect((await adminGet('jobs/status', { jobId: job.body._id }, null)).status).toBe(401);
    await finished(job.body._id);
  });
});

describe('GraphQL through the gateway', () => {
  it('runs one deep check per request however many aliases ask for it, and starts one job', { timeout: 120_000 }, async () => {
    const [{ now }] = (await sql<{ now: string }>(service, 'select clock_timestamp()::text as now')) as [{ now: string }];
    const aliases = Array.from({ length: 6 }, (_, i) => `c${i}: deepCheck(repositoryName: "second") { _id checkStatus test { listFeatures { featureName } } }`).join(' ');
    const answer = await service.graphql<Record<string, { _id: string; checkStatus: string }>>(`mutation { ${aliases} }`);
    expect(answer.errors).toBeUndefined();
    expect(new Set(Object.values(answer.data!).map((result) => result._id)).size).toBe(1);
    expect(Object.values(answer.data!)[0]!.checkStatus).toBe('ok');
    const reportsSince = await sql<{ count: number }>(service, 'select count(*)::int as count from deep_check_report where created_at > ?::timestamptz', [now]);
    expect(reportsSince[0]!.count).toBe(1);

    const jobsBefore = await sql<{ count: number }>(service, `select count(*)::int as count from service_job where job_name = 'deepCheck'`);
    const starts = Array.from({ length: 6 }, (_, i) => `s${i}: startDeepCheck(repositoryName: "second") { _id }`).join(' ');
    const started = await service.graphql<Record<string, { _id: string }>>(`mutation { ${starts} }`);
    expect(started.errors).toBeUndefined();
    const jobIds = new Set(Object.values(started.data!).map((result) => result._id));
    expect(jobIds.size).toBe(1);
    const jobsAfter = await sql<{ count: number }>(service, `select count(*)::int as count from service_job where job_name = 'deepCheck'`);
    expect(jobsAfter[0]!.count - jobsBefore[0]!.count).toBe(1);
    const [jobId] = [...jobIds];
    const status = await service.graphql<{ administrationJobStatus: { state: string } }>('query($id: ID!) { administrationJobStatus(jobId: $id) { state serviceRequestJob { id } } }', { id: jobId });
    expect(status.errors).toBeUndefined();
    expect(['pending', 'running', 'Done']).toContain(status.data!.administrationJobStatus.state);
    expect((await finished(jobId!)).state).toBe('Done');
  });

  it('refuses a user (403) and a caller without a session (401)', async () => {
    const asUser = await service.graphql('mutation { deepCheck(repositoryName: "second") { _id } }', undefined, userSession);
    expect(asUser.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'accessDenied' });
    const anonymous = await service.graphql('mutation { startDeepCheck(repositoryName: "second") { _id } }', undefined, '');
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notAuthenticated' });
  });
});

describe('the asynchronous deep check in a worker of one job at a time (JOB_CONCURRENCY=1)', () => {
  let single: TestService;
  beforeAll(async () => {
    // the default wait (30 s) for the conversion and extraction a check waits for: generous on a loaded machine
    single = await startTestService({ JOB_CONCURRENCY: '1' });
  });
  afterAll(() => single?.stop());

  it('queued deep checks hold no slot: four repositories checked at once and a user’s conversion submitted after them all end well, the conversion before the last check', { timeout: 180_000 }, async () => {
    const names = ['q1', 'q2', 'q3'];
    for (const name of names) expect((await call(`${single.adminBase}/repository?sessionId=${single.adminSession}`, json('POST', { name }))).status).toBe(201);
    const starts = await Promise.all(['default', ...names].map((name) => call(`${single.adminBase}/repository/async-deep-check/by-name?repositoryName=${name}&sessionId=${single.adminSession}`)));
    expect(starts.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const user = await single.createUserSession('queued-checks-user');
    const content = await newContent(single, { name: 'users.pdf', bytes: textPdf(1), session: user });
    const conversion = await call(`${single.contentBase}/convert/image?sessionId=${user}`, json('POST', { contentId: content.id, resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png' }));
    expect(conversion.status).toBe(200);
    const converted = (await finishedJob(single, conversion.body.jobId, { session: user }, 150_000)).serviceRequestJob;
    expect(converted.state).toBe('Done');
    const checks = await Promise.all(
      ['default', ...names].map(async (name, i) => (await finishedJob(single, starts[i]!.body._id, { base: `${single.baseUrl}/api/v1/access.svc.content.${name}/v1` }, 150_000)).serviceRequestJob),
    );
    for (const check of checks) {
      const result = JSON.parse(check.serializedResult);
      expect(result.checkStatus, result.message).toBe('ok');
    }
    const lastCheckEnd = Math.max(...checks.map((check) => Date.parse(check.endTimestamp.replace('+0000', 'Z'))));
    expect(Date.parse(converted.endTimestamp.replace('+0000', 'Z'))).toBeLessThan(lastCheckEnd);
  });

  it('runs in a slot of its own: the conversion and extraction it waits for still run', { timeout: 120_000 }, async () => {
    const started = await call(`${single.adminBase}/repository/async-deep-check/by-name?repositoryName=default&sessionId=${single.adminSession}`);
    expect(started.status).toBe(200);
    let job: Record<string, any> = {};
    for (const until = Date.now() + 90_000; Date.now() < until && !['Done', 'panic'].includes(job.state); await new Promise((resolve) => setTimeout(resolve, 200))) {
      job = (await call(`${single.adminBase}/jobs/status?jobId=${started.body._id}&sessionId=${single.adminSession}`)).body;
    }
    expect(job.state).toBe('Done');
    const result = JSON.parse(job.serviceRequestJob.serializedResult);
    expect(result.checkStatus, result.message).toBe('ok');
  });
});
