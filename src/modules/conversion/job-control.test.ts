import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, finishedJob, jobStatus, type Caller } from '../../../test/helpers/conversion.js';
import { contentUrl, newContent, newFolder, sql } from '../../../test/helpers/entries.js';
import { textPdf } from '../../../test/helpers/pdf.js';
import { call, startTestService, subscriptionEvents, type TestService } from '../../../test/helpers/service.js';

/** POST C/jobs/cancel?jobId=… as the spec's REST paths are written. */
const cancel = (service: TestService, jobId: string | undefined, caller: Caller = {}) =>
  call(contentUrl(service, '/jobs/cancel', jobId === undefined ? {} : { jobId }, caller.session ?? service.adminSession), { method: 'POST' });

/** Starts converting a new content of `bytes` as `session`; answers the job id (asserts the 200). */
async function submitted(service: TestService, name: string, bytes: Buffer, session: string, request: Record<string, unknown> = {}): Promise<string> {
  const content = await newContent(service, { name, bytes, session });
  const started = await convert(service, { contentId: content.id, ...request }, { session });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return started.body.jobId;
}

/** When each job started, in the order they started. */
async function startOrder(service: TestService, jobIds: string[]): Promise<string[]> {
  const rows = await sql<{ id: string }>(service, `select id from service_job where id in (select jsonb_array_elements_text(?::jsonb)) order by start_timestamp, id`, [JSON.stringify(jobIds)]);
  return rows.map((row) => row.id);
}

describe('queued jobs: the per-user bound and cancellation (no worker: jobs stay pending)', () => {
  let service: TestService;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    service = await startTestService({ JOB_CONCURRENCY: '0', JOB_MAX_PENDING_PER_USER: '3' });
    [alice, bob] = [await service.createUserSession('alice'), await service.createUserSession('bob')];
  });
  afterAll(() => service?.stop());

  it('past JOB_MAX_PENDING_PER_USER queued jobs a conversion is a 429 with Retry-After (REST) and extensions.retryAfter (GraphQL); others are not held back', async () => {
    const pdf = textPdf(1);
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push(await submitted(service, `bound-${i}.pdf`, pdf, alice));
    const content = await newContent(service, { name: 'one-too-many.pdf', bytes: pdf, session: alice });
    const refused = await convert(service, { contentId: content.id }, { session: alice });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 429, reasonCode: 'tooManyRequests', message: expect.stringContaining('JOB_MAX_PENDING_PER_USER') });
    const viaGraphql = await service.graphql(
      'mutation($c: ID!) { convertToImage(repository: "default", input: { contentId: $c, resultAction: CONTENT_REPRESENTATION, targetFormat: png }) { jobId } }',
      { c: content.id },
      alice,
    );
    expect(viaGraphql.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'tooManyRequests', status: 429, retryAfter: 10 });
    // nothing was queued by the refusals
    expect(await sql(service, `select id from service_job where client_username = 'alice' and state = 'pending'`)).toHaveLength(3);
    // another user is not held back; alice is again once one of hers has left the queue
    expect((await convert(service, { contentId: (await newContent(service, { name: 'bobs.pdf', bytes: pdf, session: bob })).id }, { session: bob })).status).toBe(200);
    expect((await cancel(service, queued[0], { session: alice })).status).toBe(200);
    expect((await convert(service, { contentId: content.id }, { session: alice })).status).toBe(200);
  });

  it('holds under concurrent submissions: 10 at once by one user, exactly 3 queued', async () => {
    const carol = await service.createUserSession('carol');
    const content = await newContent(service, { name: 'race.pdf', bytes: textPdf(1), session: carol });
    const answers = await Promise.all(Array.from({ length: 10 }, () => convert(service, { contentId: content.id }, { session: carol })));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(3).fill(200), ...Array(7).fill(429)]);
    expect(await sql(service, `select id from service_job where client_username = 'carol' and state = 'pending'`)).toHaveLength(3);
  });

  it('cancels a queued job at once: state cancelled in the record, in GET C/jobs?state=cancelled and in the jobStatus subscription; again is a 409', async () => {
    const dora = await service.createUserSession('dora');
    const jobId = await submitted(service, 'to-cancel.pdf', textPdf(1), dora);
    const watched = subscriptionEvents<{ jobStatus: { state: string } }>(
      service,
      `subscription { jobStatus(repository: "default", jobId: "${jobId}") { state } }`,
      2,
      { session: dora },
    );
    // the subscription answers the status now first (pending), then each change
    await sleep(1000);
    const cancelled = await cancel(service, jobId, { session: dora });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse',
      state: 'cancelled',
      serviceRequestJob: { id: jobId, state: 'cancelled', errorMessage: 'cancelled by dora', endTimestamp: expect.any(String) },
    });
    const { events, error } = await watched;
    expect(error).toBeUndefined();
    // (on a machine slow enough that the cancellation came before the subscription read the status, its one event is the final one)
    expect([['pending', 'cancelled'], ['cancelled']]).toContainEqual(events.map((event) => event.data?.jobStatus.state));
    const listed = await call(contentUrl(service, '/jobs', { state: 'cancelled' }, dora));
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ count: 1, entries: [{ id: jobId, state: 'cancelled' }] });
    expect((await jobStatus(service, jobId, { session: dora })).body.state).toBe('cancelled');
    expect(await cancel(service, jobId, { session: dora })).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('has ended (cancelled)') } });
  });

  it("another user's job: 403 accessDenied; an administrator cancels it; an unknown job is a 404, a missing jobId a 400; GraphQL cancelJob alike", async () => {
    const erin = await service.createUserSession('erin');
    const [first, second] = [await submitted(service, 'erin-1.pdf', textPdf(1), erin), await submitted(service, 'erin-2.pdf', textPdf(1), erin)];
    expect(await cancel(service, first, { session: bob })).toMatchObject({ status: 403, body: { reasonCode: 'accessDenied' } });
    expect((await jobStatus(service, first, { session: erin })).body.state).toBe('pending');
    expect(await cancel(service, first)).toMatchObject({ status: 200, body: { state: 'cancelled', serviceRequestJob: { errorMessage: 'cancelled by admin' } } });
    expect(await cancel(service, 'no-such-job', { session: erin })).toMatchObject({ status: 404, body: { reasonCode: 'notFound' } });
    expect(await cancel(service, undefined, { session: erin })).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });

    const mutation = 'mutation($j: ID!) { cancelJob(repository: "default", jobId: $j) { state serviceRequestJob { id state } } }';
    expect((await service.graphql(mutation, { j: second }, bob)).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'accessDenied', status: 403 });
    expect((await service.graphql(mutation, { j: second }, erin)).data).toEqual({ cancelJob: { state: 'cancelled', serviceRequestJob: { id: second, state: 'cancelled' } } });
    expect((await service.graphql(mutation, { j: second }, erin)).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
  });
});

/** The render processes of this process (the service runs in it), by pid. */
async function renderProcesses(): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const [stat, command] = await Promise.all([readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''), readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')]);
    // the parent's pid is the 4th field of stat, after the command in parentheses
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === process.pid && command.includes('render-child')) pids.push(Number(name));
  }
  return pids;
}

const alive = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')) !== '';

describe('jobs run by a worker of one job at a time (JOB_CONCURRENCY=1)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ JOB_CONCURRENCY: '1', CONV_PDF_DPI: '100' });
  });
  afterAll(() => service?.stop());

  it("users take turns: another user's jobs submitted after 8 queued ones start before most of them, alternating with them", { timeout: 180_000 }, async () => {
    const [ann, ben] = [await service.createUserSession('ann'), await service.createUserSession('ben')];
    // a few pages each, so that the first of ann's is running when ben's arrive
    const pdf = textPdf(4);
    const anns: string[] = [];
    for (let i = 0; i < 8; i++) anns.push(await submitted(service, `ann-${i}.pdf`, pdf, ann));
    const bens: string[] = [];
    for (let i = 0; i < 3; i++) bens.push(await submitted(service, `ben-${i}.pdf`, pdf, ben));
    const ended = await Promise.all([...anns, ...bens].map((id) => finishedJob(service, id, {}, 150_000)));
    expect(ended.map((job) => job.state)).toEqual(Array(11).fill('Done'));
    const order = await startOrder(service, [...anns, ...bens]);
    const position = (id: string) => order.indexOf(id);
    const annsBefore = (id: string) => anns.filter((a) => position(a) < position(id)).length;
    // ben's first waited for at most the job running when it came and one taken meanwhile
    expect(annsBefore(bens[0]!), order.join(' ')).toBeLessThanOrEqual(2);
    // then one of each in turn: ben's three are done before ann's sixth starts
    expect(annsBefore(bens[2]!), order.join(' ')).toBeLessThanOrEqual(4);
  });

  it('a running job is stopped: its render process killed, cancelled at once, and nothing of it stored afterwards', { timeout: 120_000 }, async () => {
    const folder = await newFolder(service, 'stopped');
    const jobId = await submitted(service, 'long.pdf', textPdf(60), service.adminSession, { resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'page', parentId: folder.id } });
    let running: Record<string, any>;
    for (const until = Date.now() + 60_000; ; await sleep(50)) {
      running = (await jobStatus(service, jobId)).body.serviceRequestJob;
      if (running.state === 'running' && running.percentage >= 10) break;
      expect(running.state).not.toBe('Done');
      expect(Date.now()).toBeLessThan(until);
    }
    const renderersBefore = await renderProcesses();
    const cancelled = await cancel(service, jobId);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.state).toBe('cancelled');
    const pagesAtCancel = (await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 100 }))).body.count as number;
    expect(pagesAtCancel).toBeLessThan(60);
    // the render process at work is killed (one that ends its job is kept for the next)
    for (const until = Date.now() + 15_000; (await Promise.all(renderersBefore.map(alive))).every(Boolean); await sleep(100)) expect(Date.now()).toBeLessThan(until);
    // the worker's one slot is free again: a job submitted now runs to its end
    const next = await finishedJob(service, await submitted(service, 'after-cancel.pdf', textPdf(1), service.adminSession));
    expect(next.state).toBe('Done');
    expect((await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 100 }))).body.count).toBe(pagesAtCancel);
    expect((await jobStatus(service, jobId)).body.serviceRequestJob).toMatchObject({ state: 'cancelled', errorMessage: 'cancelled by admin' });
    // an ended job cannot be cancelled
    expect(await cancel(service, next.serviceRequestJob.id)).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('has ended (Done)') } });
  });

  it("deleting a user cancels the user's pending and running jobs in the same call: no output appears afterwards", { timeout: 120_000 }, async () => {
    const dave = await service.createUserSession('dave');
    const folder = await newFolder(service, 'dave-out', undefined, dave);
    const pdf = textPdf(30);
    const jobIds: string[] = [];
    for (let i = 1; i <= 3; i++) {
      jobIds.push(await submitted(service, `dave-${i}.pdf`, pdf, dave, { resultAction: 'NEW_CONTENT', newContentSpecification: { name: `dave-out-${i}`, parentId: folder.id } }));
    }
    const outputs = async () => (await call(contentUrl(service, `/folder/${folder.id}/children`, { limit: 1000 }))).body.count as number;
    for (const until = Date.now() + 60_000; (await outputs()) === 0; await sleep(50)) expect(Date.now()).toBeLessThan(until);
    const deleted = await call(`${service.adminBase}/user?userName=dave&sessionId=${service.adminSession}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    const atDeletion = await outputs();
    const states = await Promise.all(jobIds.map(async (id) => (await jobStatus(service, id)).body.serviceRequestJob));
    expect(states.map((job) => job.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(states[0].errorMessage).toBe("cancelled: its user 'dave' was deleted");
    // the worker's one slot is free again once dave's running job has stopped
    expect((await finishedJob(service, await submitted(service, 'after-dave.pdf', textPdf(1), service.adminSession))).state).toBe('Done');
    expect(await outputs()).toBe(atDeletion);
    expect(atDeletion).toBeLessThan(30);
  });
});
