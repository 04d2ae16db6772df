import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { JobCancelled, JobFailure, JobQueue, jobPriority } from './queue.js';
import { JobChanges } from './changes.js';
import { claimJob, findJob, insertJob, markCancelled, reportProgress, saveJobResult, saveLowlevelRequest, type JobRecord } from './records.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

/** A job of `jobName` whose request carries `label`, to find its records by. */
const labelledJob = (jobName: string, label: string) => ({
  repositoryId: 'svc.repository.default',
  jobName,
  conversionType: 'TEST',
  clientUsername: 'admin',
  clientRoles: [],
  contentIds: [],
  inputFilenames: [],
  partition: 'access.svc.content.default',
  serializedRequest: { label },
});

async function finished(jobId: string): Promise<JobRecord> {
  const until = Date.now() + 30_000;
  for (;;) {
    const job = await findJob(service.services.orm.em.fork(), jobId);
    if (job && ['Done', 'panic', 'cancelled'].includes(job.state)) return job;
    if (Date.now() > until) throw new Error(`job ${jobId} did not end: ${JSON.stringify(job)}`);
    await sleep(50);
  }
}

/**
 * The contract of the job system, the same for both queue backends: jobs defined by name with a
 * handler, progress, results, failures and requeueing recorded in the job record.
 */
function contract(backend: 'postgres' | 'mongodb', mongoUrl?: string) {
  let queue: JobQueue;
  const order: string[] = [];
  const submit = (jobName: string, label: string) =>
    queue.submit(service.services.orm.em.fork(), {
      repositoryId: 'svc.repository.default',
      jobName,
      conversionType: 'TEST',
      clientUsername: 'admin',
      clientRoles: ['ADMIN'],
      contentIds: ['a', 'b'],
      inputFilenames: ['a.pdf', 'b.pdf'],
      partition: 'access.svc.content.default',
      serializedRequest: { label },
    });

  beforeAll(async () => {
    const config = { ...service.config, MONGODB_URL: mongoUrl, WORKER_NAME: `contract-${backend}`, JOB_CONCURRENCY: 1 };
    queue = new JobQueue(config, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    queue.define(`contract-echo-${backend}`, async (run) => {
      order.push(String(run.record.serializedRequest.label));
      await run.progress(50);
      return { result: { echoed: run.record.serializedRequest.label, inputs: run.record.inputFilenames } };
    });
    queue.define(`contract-fail-${backend}`, async () => {
      throw new JobFailure('illegalArguments', 'the input is not acceptable');
    });
    // Postgres breaks a run off as it does a deadlock's victim: the first run (`collides-once`) or every one
    const collide = (run: { em: EntityManager }) => run.em.getConnection().execute(`do $$ begin raise exception 'deadlock detected' using errcode = 'deadlock_detected'; end $$`);
    queue.define(`contract-collides-once-${backend}`, async (run) => {
      if (run.record.tries === 1) await collide(run);
      return { result: { tries: run.record.tries } };
    });
    queue.define(`contract-collides-${backend}`, async (run) => {
      await collide(run);
      return { result: {} };
    });
    queue.define(`contract-requeue-${backend}`, async (run) => {
      order.push(String(run.record.serializedRequest.label));
      if (run.record.serializedLowlevelRequest?.lowered) return { result: { second: true } };
      return { requeue: { priority: jobPriority.lowest, note: { lowered: true } } };
    });
    await queue.start();
    expect(queue.backendName).toBe(backend);
  });
  afterAll(() => queue?.stop());

  it('runs a job by name: record Done, percentage 100, result, several inputs kept', async () => {
    const submitted = await submit(`contract-echo-${backend}`, 'one');
    expect(submitted).toMatchObject({ contentIds: ['a', 'b'], inputFilenames: ['a.pdf', 'b.pdf'] });
    // the record as inserted: the queue job that takes it names itself then
    expect(submitted).toMatchObject({ state: 'pending', queueJobId: null });
    const job = await finished(submitted.id);
    expect(job.queueJobId).toBeTruthy();
    expect(job).toMatchObject({ state: 'Done', percentage: 100, tries: 1, workerName: `contract-${backend}`, serializedResult: { echoed: 'one', inputs: ['a.pdf', 'b.pdf'] } });
    expect(job.startTimestamp).toBeInstanceOf(Date);
    expect(job.endTimestamp!.getTime()).toBeGreaterThanOrEqual(job.startTimestamp!.getTime());
  });

  it('a failing handler: state panic with its reason code, message and stack trace', async () => {
    const job = await finished((await submit(`contract-fail-${backend}`, 'bad')).id);
    expect(job).toMatchObject({ state: 'panic', reasonCode: 'illegalArguments', errorMessage: 'the input is not acceptable', revivable: false });
    expect(job.stackTrace).toContain('JobFailure: the input is not acceptable');
  });

  it('submitCoalesced: a burst of calls makes one job at once and one at the end of the window; a call after a quiet window goes out at once', async () => {
    const windowMs = 400;
    const label = `burst-${backend}`;
    // no handler: the records stay pending and are only counted
    const job = () => labelledJob(`coalesced-${backend}`, label);
    const records = async () =>
      (await service.services.orm.em.fork().getConnection().execute<{ n: number }[]>(`select count(*)::int as n from service_job where serialized_request->>'label' = ?`, [label]))[0]!.n;
    const until = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while ((await records()) < count && Date.now() < deadline) await sleep(20);
      return records();
    };
    const started = performance.now();
    for (let i = 0; i < 50; i++) queue.submitCoalesced(label, windowMs, job);
    expect(await until(2)).toBe(2);
    // the second went out at the window's end, not before
    expect(performance.now() - started).toBeGreaterThanOrEqual(windowMs - 5);
    await sleep(windowMs + 50);
    expect(await records()).toBe(2);
    queue.submitCoalesced(label, windowMs, job);
    expect(await until(3)).toBe(3);
  });

  it('a run broken off by a deadlock runs again from what it stored; one that keeps colliding fails as a conflict', async () => {
    const once = await finished((await submit(`contract-collides-once-${backend}`, 'once')).id);
    expect(once).toMatchObject({ state: 'Done', tries: 2, serializedResult: { tries: 2 } });
    const always = await finished((await submit(`contract-collides-${backend}`, 'always')).id);
    expect(always).toMatchObject({ state: 'panic', tries: 4, reasonCode: 'conflict' });
    expect(always.errorMessage).toContain('deadlock detected');
  });

  it('a requeued job runs again with its new priority', async () => {
    const submitted = await submit(`contract-requeue-${backend}`, 'again');
    const job = await finished(submitted.id);
    // the record names the queue job of its last run
    expect(job.queueJobId).toBeTruthy();
    expect(job.queueJobId).not.toBe(submitted.queueJobId);
    expect(job).toMatchObject({ state: 'Done', priority: jobPriority.lowest, tries: 2, serializedResult: { second: true } });
    expect(order.filter((label) => label === 'again')).toHaveLength(2);
  });
}

describe('job system on the Postgres backend (the default)', () => contract('postgres'));

const mongoUrl = process.env.MONGODB_URL;
if (!mongoUrl) console.log('job system contract on MongoDB skipped: MONGODB_URL is not set (no MongoDB server can be installed here; see docs/conversion.md)');
describe.skipIf(!mongoUrl)('job system on the MongoDB backend (MONGODB_URL)', () => contract('mongodb', mongoUrl));

describe('stopping the queue', () => {
  it('lets a coalesced submission on its way end first, and drops one asked for while it stops', async () => {
    const queue = new JobQueue(service.config, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    await queue.start();
    const label = 'stopping';
    const job = () => labelledJob('coalesced-stopping', label);
    queue.submitCoalesced('first', 60_000, job); // goes out at once
    const stopped = queue.stop();
    queue.submitCoalesced('second', 60_000, job); // asked for while stopping: dropped
    await stopped;
    const connection = service.services.orm.em.fork().getConnection();
    const records = await connection.execute(`select id from service_job where serialized_request->>'label' = ?`, [label]);
    const queued = await connection.execute(`select id from agenda_jobs where name = 'coalesced-stopping'`);
    // one record, queued whole (its queue job saved) before the queue's connections closed
    expect(records).toHaveLength(1);
    expect(queued).toHaveLength(1);
  });
});

describe('queue jobs, locks and cancellation (one job at a time, a lock lifetime of 1 s)', () => {
  let queue: JobQueue;
  const runs = new Map<string, number>();
  let release: () => void = () => undefined;
  let released = new Promise<void>((resolve) => (release = resolve));
  let stopped: { reason: string; store: string; rows: string; placed: boolean } | undefined;
  let storedRows: { placed: boolean; targetName: string | null; percentage: number } | undefined;
  const submit = (jobName: string, label: string) => queue.submit(service.services.orm.em.fork(), labelledJob(jobName, label));
  const lockedQueueJobs = async (name: string) =>
    (await service.services.orm.em.fork().getConnection().execute<{ n: number }[]>(`select count(*)::int as n from agenda_jobs where name = ? and locked_at is not null`, [name]))[0]!.n;

  beforeAll(async () => {
    const config = { ...service.config, WORKER_NAME: 'locks', JOB_CONCURRENCY: 1, JOB_LOCK_LIFETIME_MS: 1000, JOB_POLL_MS: 200 };
    queue = new JobQueue(config, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    const counted = (run: { record: JobRecord }) => runs.set(run.record.id, (runs.get(run.record.id) ?? 0) + 1);
    queue.define('held', async (run) => {
      counted(run);
      await released;
      return { result: {} };
    });
    queue.define('long', async (run) => {
      counted(run);
      await sleep(3_500);
      return { result: {} };
    });
    queue.define('stoppable', async (run) => {
      counted(run);
      // as a render process is killed: the run ends when the job is cancelled
      await new Promise((resolve) => run.signal.addEventListener('abort', resolve, { once: true }));
      // nothing is stored for it any more
      const refused = (error: unknown) => (error instanceof JobCancelled ? 'refused' : String(error));
      const store = await run.whileRunning(async () => 'stored').catch(refused);
      // the page store's path outside the ORM answers the same, before placing anything
      let placed = false;
      const rows = await run
        .storeRows(async () => void (placed = true), [{ sql: `update service_job set target_name = ? where id = ?`, params: ['stored', run.record.id] }], 50)
        .then(() => 'stored', refused);
      stopped = { reason: run.signal.reason instanceof JobCancelled ? 'JobCancelled' : String(run.signal.reason), store, rows, placed };
      return { result: { stored: true } };
    });
    queue.define('stores-rows', async (run) => {
      let placed = false;
      await run.storeRows(async () => void (placed = true), [{ sql: `update service_job set target_name = ? where id = ?`, params: ['rows stored', run.record.id] }], 40);
      const record = (await findJob(service.services.orm.em.fork(), run.record.id))!;
      storedRows = { placed, targetName: record.targetName, percentage: record.percentage };
      return { result: {} };
    });
    // a kind in a slot of its own beside JOB_CONCURRENCY (as the deep check): the process may lock two queue jobs
    queue.define('waits', async () => ({ result: {} }), { ownSlot: true });
    await queue.start();
  });
  afterAll(() => queue?.stop());

  it('a kind never locks more queue jobs than it runs: the ones waiting for the slot hold no lock, and each job runs once', { timeout: 30_000 }, async () => {
    const jobs = await Promise.all(['a', 'b', 'c'].map((label) => submit('held', label)));
    for (const until = Date.now() + 10_000; !(await Promise.all(jobs.map((job) => findJob(service.services.orm.em.fork(), job.id)))).some((job) => job?.state === 'running'); await sleep(50)) {
      expect(Date.now()).toBeLessThan(until);
    }
    // longer than the lock lifetime, and several polls
    await sleep(1_500);
    expect(await lockedQueueJobs('held')).toBe(1);
    release();
    const ended = await Promise.all(jobs.map((job) => finished(job.id)));
    expect(ended.map((job) => [job.state, job.tries])).toEqual([['Done', 1], ['Done', 1], ['Done', 1]]);
    expect(jobs.map((job) => runs.get(job.id))).toEqual([1, 1, 1]);
    released = new Promise<void>((resolve) => (release = resolve));
  });

  it('a job running longer than the lock lifetime keeps its lock: it runs once', { timeout: 30_000 }, async () => {
    const job = await submit('long', 'long');
    expect(await finished(job.id)).toMatchObject({ state: 'Done', tries: 1 });
    expect(runs.get(job.id)).toBe(1);
  });

  it('a running job cancelled: its signal aborts with JobCancelled, a store is refused, and the record stays cancelled', { timeout: 30_000 }, async () => {
    const job = await submit('stoppable', 'stop me');
    for (const until = Date.now() + 10_000; (await findJob(service.services.orm.em.fork(), job.id))?.state !== 'running'; await sleep(50)) expect(Date.now()).toBeLessThan(until);
    expect(await markCancelled(service.services.orm.em.fork(), job.id, 'cancelled by a test')).toMatchObject({ state: 'cancelled' });
    // the handler returns a result after the cancellation: it is not kept
    for (const until = Date.now() + 10_000; (await lockedQueueJobs('stoppable')) > 0; await sleep(50)) expect(Date.now()).toBeLessThan(until);
    expect(await findJob(service.services.orm.em.fork(), job.id)).toMatchObject({ state: 'cancelled', errorMessage: 'cancelled by a test', serializedResult: null });
    expect(stopped).toEqual({ reason: 'JobCancelled', store: 'refused', rows: 'refused', placed: false });
  });

  it('a running job stores rows outside the ORM: placed first, then the rows and its percentage committed', { timeout: 30_000 }, async () => {
    const job = await submit('stores-rows', 'rows');
    expect(await finished(job.id)).toMatchObject({ state: 'Done', targetName: 'rows stored' });
    expect(storedRows).toEqual({ placed: true, targetName: 'rows stored', percentage: 40 });
  });
});

describe('a queued job starts when the run before it ends, not at the next scan', () => {
  let queue: JobQueue;
  const queueJobsLeft = async () =>
    (await service.services.orm.em.fork().getConnection().execute<{ n: number }[]>(`select count(*)::int as n from agenda_jobs where name = 'next-at-once'`))[0]!.n;

  beforeAll(async () => {
    // a scan a minute: only the announcement of the freed slot can start the jobs behind the first in time
    const config = { ...service.config, WORKER_NAME: 'next-at-once', JOB_CONCURRENCY: 1, JOB_POLL_MS: 60_000 };
    queue = new JobQueue(config, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    queue.define('next-at-once', async () => {
      await sleep(100);
      return { result: {} };
    });
    await queue.start();
  });
  afterAll(() => queue?.stop());

  it('four jobs of one slot run one after the other within seconds, and leave no queue job behind', { timeout: 30_000 }, async () => {
    const submitted = [];
    for (const label of ['a', 'b', 'c', 'd']) submitted.push(await queue.submit(service.services.orm.em.fork(), labelledJob('next-at-once', label)));
    const jobs = (await Promise.all(submitted.map((job) => finished(job.id)))).sort((a, b) => a.startTimestamp!.getTime() - b.startTimestamp!.getTime());
    expect(jobs.map((job) => job.state)).toEqual(['Done', 'Done', 'Done', 'Done']);
    for (let i = 1; i < jobs.length; i++) {
      expect(jobs[i]!.startTimestamp!.getTime()).toBeGreaterThanOrEqual(jobs[i - 1]!.endTimestamp!.getTime());
      expect(jobs[i]!.startTimestamp!.getTime() - jobs[i - 1]!.endTimestamp!.getTime()).toBeLessThan(5_000);
    }
    // a run removes its queue job itself (Agenda's removeOnComplete is off)
    const until = Date.now() + 5_000;
    while ((await queueJobsLeft()) > 0 && Date.now() < until) await sleep(50);
    expect(await queueJobsLeft()).toBe(0);
  });
});

describe('a record whose submitter died before queuing it', () => {
  it('is taken by the queue job the sweep adds for its kind once it has waited; a kind with no such record gets none', async () => {
    const queue = new JobQueue({ ...service.config, WORKER_NAME: 'sweep', JOB_CONCURRENCY: 1 }, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    queue.define('orphaned', async (run) => ({ result: { label: run.record.serializedRequest.label } }));
    queue.define('never-orphaned', async () => ({ result: {} }));
    await queue.start();
    try {
      const em = service.services.orm.em.fork();
      // the record alone, as a submitter that died before its queue job left it
      const orphan = await insertJob(em, labelledJob('orphaned', 'left behind'));
      const fresh = await insertJob(em, labelledJob('orphaned', 'just submitted'));
      await em.getConnection().execute(`update service_job set created_at = now() - interval '2 minutes' where id = ?`, [orphan.id]);
      const queued = async () => (await em.getConnection().execute(`select id from agenda_jobs where name in ('orphaned', 'never-orphaned')`)).length;
      expect(await queued()).toBe(0);
      expect(await queue.requeueWaiting(60_000)).toEqual(['orphaned']);
      const done = await finished(orphan.id);
      expect(done).toMatchObject({ state: 'Done', serializedResult: { label: 'left behind' } });
      // the younger one has not waited long enough to be taken for lost (its queue job may be on its way)
      expect(await findJob(em, fresh.id)).toMatchObject({ state: 'pending' });
      expect(await queue.requeueWaiting(60_000)).toEqual([]);
    } finally {
      await queue.stop();
    }
  });
});

describe("what a job sends on the queue's connections and channels", () => {
  /** A client listening to `channels`, and what it heard on each. */
  async function listener(channels: string[]) {
    const client = new pg.Client({ connectionString: service.config.DATABASE_URL! });
    const heard: { channel: string; payload: string }[] = [];
    client.on('notification', (message) => heard.push({ channel: message.channel, payload: message.payload ?? '' }));
    await client.connect();
    for (const channel of channels) await client.query(`listen "${channel}"`);
    return { heard, end: () => client.end() };
  }

  it("Agenda's state notifications are not sent (no process listens to them); its announcements of queue jobs are", { timeout: 30_000 }, async () => {
    const queue = new JobQueue({ ...service.config, WORKER_NAME: 'quiet', JOB_CONCURRENCY: 1 }, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    queue.define('quiet', async () => ({ result: {} }));
    await queue.start();
    const heard = await listener(['agenda:jobs', 'agenda:jobs:state']);
    try {
      const job = await queue.submit(service.services.orm.em.fork(), labelledJob('quiet', 'quiet'));
      expect(await finished(job.id)).toMatchObject({ state: 'Done' });
      // the freed slot is announced after the record is Done (a fixed pause could end first on a loaded machine)
      const announcements = () => heard.heard.filter((message) => message.channel === 'agenda:jobs' && message.payload.includes('"quiet"')).length;
      for (const until = Date.now() + 10_000; announcements() < 2 && Date.now() < until; ) await sleep(50);
      // and a moment for a state notification, were one sent
      await sleep(500);
      const quiet = heard.heard.filter((message) => message.payload.includes('"quiet"'));
      expect(quiet.filter((message) => message.channel === 'agenda:jobs:state')).toEqual([]);
      // the submission's, and the freed slot's
      expect(quiet.filter((message) => message.channel === 'agenda:jobs').length).toBeGreaterThanOrEqual(2);
    } finally {
      await heard.end();
      await queue.stop();
    }
  });

  it("the queue's connections commit without waiting for the WAL to reach the disk; the service's others wait", async () => {
    const queue = new JobQueue({ ...service.config, WORKER_NAME: 'unflushed', JOB_CONCURRENCY: 0 }, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
    const setting = `select setting, source from pg_settings where name = 'synchronous_commit'`;
    try {
      const { rows } = await (queue as unknown as { pool: pg.Pool }).pool.query(setting);
      expect(rows).toEqual([{ setting: 'off', source: 'client' }]);
      const [other] = await service.services.orm.em.fork().getConnection().execute<{ source: string }[]>(setting);
      expect(other!.source).not.toBe('client');
    } finally {
      await queue.stop();
    }
  });

  it('a watcher of states hears the changes of state of its job (a cancellation), not its progress; a watcher of every change hears both, and neither its notes (engine request, partial result)', { timeout: 30_000 }, async () => {
    const changes = new JobChanges(service.config.DATABASE_URL!, service.services.logger);
    const em = service.services.orm.em.fork();
    const job = await insertJob(em, labelledJob('watched', 'watched'));
    const collect = async (kind: 'all' | 'states') => {
      const iterator = await changes.watch(job.id, kind);
      const seen: string[] = [];
      const done = (async () => {
        for (;;) {
          const next = await iterator.next();
          if (next.done) return;
          seen.push(`${next.value.state} ${next.value.percentage}`);
          if (next.value.state === 'cancelled') return iterator.return?.();
        }
      })();
      return { seen, done };
    };
    try {
      const [every, states] = await Promise.all([collect('all'), collect('states')]);
      expect(await claimJob(em, 'watched', 'queue-job-of-watched', 'a worker')).toMatchObject({ id: job.id, state: 'running' });
      await reportProgress(em, job.id, 40);
      expect(await saveLowlevelRequest(em, job.id, { engine: 'test' })).toBe(true);
      expect(await saveJobResult(em, job.id, { pages: 1 })).toBe(true);
      await markCancelled(em, job.id, 'cancelled by a test');
      await Promise.all([every.done, states.done]);
      expect(every.seen).toEqual(['running 0', 'running 40', 'cancelled 40']);
      expect(states.seen).toEqual(['running 0', 'cancelled 40']);
      // the notes are kept; a partial result is refused once the job is no longer running
      expect(await findJob(em, job.id)).toMatchObject({ serializedLowlevelRequest: { engine: 'test' }, serializedResult: { pages: 1 } });
      expect(await saveJobResult(em, job.id, { pages: 2 })).toBe(false);
    } finally {
      await changes.close();
    }
  });
});
