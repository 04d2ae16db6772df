import os from 'node:os';
import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend, PostgresNotificationChannel } from '@agendajs/postgres-backend';
import { Agenda, type AgendaBackend, type Job } from 'agenda';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { Orm } from '../../db/orm.js';
import { endPool } from '../../db/end-pool.js';
import { shortTransaction, type Statement } from '../../db/short-transaction.js';
import { withStatementTimeout } from '../../db/statement-timeout.js';
import { withProjectPaths } from '../../paths.js';
import { isStatementTimeout, isTransientConflict } from '../../errors.js';
import { JobChanges } from './changes.js';
import {
  claimJob,
  completeJob,
  failJob,
  holdRunning,
  holdRunningStatement,
  insertBoundedJob,
  insertExclusiveJob,
  insertJob,
  isRunning,
  jobState,
  kindsWaitingLong,
  progressStatement,
  reportProgress,
  requeueJob,
  type JobRecord,
  type NewJob,
} from './records.js';

/** Agenda's priorities (its named levels: lowest -20, low -10, normal 0). */
export const jobPriority = { normal: 0, low: -10, lowest: -20 } as const;

/** What a handler gets for one run of a job. */
export interface JobRun {
  record: JobRecord;
  /** a unit of work of its own */
  em: EntityManager;
  /**
   * saves the percentage (0–100) in the job record; in `tx`, the transaction of a store (whileRunning),
   * the result and its percentage commit together (one commit a page, not two)
   */
  progress(percentage: number, tx?: EntityManager): Promise<void>;
  /** aborted when the job is cancelled (its reason a JobCancelled): a handler stops what it runs (a child process) */
  signal: AbortSignal;
  /**
   * Stores a result of the job (a page, a new content) in a transaction that holds the job's record:
   * refused with JobCancelled once the job is cancelled, and a cancellation waits for a store under
   * way, so that nothing of a job is stored after its cancellation answered.
   */
  whileRunning<T>(store: (em: EntityManager) => Promise<T>): Promise<T>;
  /**
   * whileRunning for a result stored as rows written by `statements` (a page image: one such store a
   * page), with the job's `percentage` after them, outside the ORM in two messages to Postgres
   * (shortTransaction): the record held `for share`, then `place` (the result's file placed durably),
   * then the rows and the percentage committed together. Refused with JobCancelled as whileRunning,
   * before `place` runs.
   */
  storeRows(place: () => Promise<void>, statements: Statement[], percentage?: number): Promise<void>;
}

/**
 * How a run ended: with a result (state Done) or back in the queue — with another priority, or as it
 * is when it gave its turn up to other owners' jobs. A thrown error is state panic.
 */
export type JobOutcome = { result: Record<string, unknown> } | { requeue: { priority?: number; note?: Record<string, unknown> } };
export type JobHandler = (run: JobRun) => Promise<JobOutcome>;

/** The job was cancelled while it ran: its run ends, and its record stays `cancelled`. */
export class JobCancelled extends Error {
  constructor(jobId: string) {
    super(`job '${jobId}' was cancelled`);
    this.name = 'JobCancelled';
  }
}

/** A failure whose reason code and message the job record keeps as they are (DESIGN §7). */
export class JobFailure extends Error {
  constructor(
    readonly reasonCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'JobFailure';
  }
}

/** The failure of `what` (a job's statement) that Postgres cancelled after JOB_STATEMENT_TIMEOUT_MS. */
export const statementTimedOut = (config: Config, what = 'a database statement of the job') =>
  new JobFailure('statementTimeout', `${what} ran longer than JOB_STATEMENT_TIMEOUT_MS (${config.JOB_STATEMENT_TIMEOUT_MS} ms) and was cancelled`);

/**
 * What a job's failure records for its client. The storage folders of this deployment are named, not
 * shown (`<cache storage>/.tmp/…`): a library's message (vips, pdfjs) may quote a path; the project's
 * files are named relative to its root (`dist/workers/…`), not where it is installed.
 */
export function failureOf(error: unknown, config: Config): { reasonCode: string; errorMessage: string; stackTrace: string } {
  const e = error instanceof Error ? error : new Error(String(error));
  // a JobFailure, a ServiceError or a domain error (LimitExceeded…) names its reason code; a collision
  // with concurrent transactions that persisted is a conflict, as it is for a request
  const named = (e as { reasonCode?: unknown }).reasonCode;
  const reasonCode = typeof named === 'string' ? named : isTransientConflict(error) ? 'conflict' : 'internal';
  const folders: [string, string][] = [
    [config.cacheStoragePath, '<cache storage>'],
    [config.contentStoragePath, '<content storage>'],
    [config.dataDir, '<data folder>'],
  ];
  const withoutFolders = (text: string) => withProjectPaths(folders.reduce((result, [folder, name]) => result.split(folder).join(name), text));
  return { reasonCode, errorMessage: withoutFolders(e.message), stackTrace: withoutFolders(e.stack ?? `${e.name}: ${e.message}`) };
}

/**
 * Agenda's Postgres channel without its state notifications. Agenda sends three a run (start, success,
 * complete) so that `agenda.on(…)` listeners of other processes hear of it; the queue listens to its
 * own process's only (a freed slot, define()). They were three statements a job, each delivered to and
 * parsed by every process (docs/benchmarks.md, "conversion — fewer statements a job").
 */
class QueueNotifications extends PostgresNotificationChannel {
  override async publishState(): Promise<void> {}
}

/** How often a job that collided with a concurrent transaction (`isTransientConflict`) runs again before it fails. */
const collisionRequeues = 3;

/** Seconds a client refused for having JOB_MAX_PENDING_PER_USER jobs queued is asked to wait (`Retry-After`). */
export const pendingRetryAfterSeconds = 10;

/**
 * The job system of every background capability (conversion, text extraction, reindexing, the
 * asynchronous deep check): jobs are defined by name with a handler; the job record (`service_job`) is
 * what clients see, Agenda 6 is the queue. Agenda runs on its Postgres backend in the service's database
 * (LISTEN/NOTIFY wakes workers at once) or, when MONGODB_URL is set, on its MongoDB backend; the
 * handlers are the same.
 *
 * Turns: a queue job carries no job of its own. Each submission queues one, and when a worker runs it,
 * it takes the pending record of its kind whose owner's turn is the oldest (`claimJob`): one user's 500
 * queued jobs take turns with another user's one. Queue jobs are interchangeable; one whose record was
 * cancelled meanwhile takes another, or none.
 *
 * At-least-once: a worker that dies leaves its queue lock to expire (JOB_LOCK_LIFETIME_MS; running jobs
 * touch it every third of that), another worker runs the queue job again, which takes the record it ran
 * before, and `tries` counts the start.
 */
export class JobQueue {
  readonly workerName: string;
  /** job record changes of every process, for subscriptions */
  readonly changes: JobChanges;
  private readonly agenda: Agenda;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly pool?: pg.Pool;
  private started = false;
  /** slots of job kinds that run in a slot of their own (define's `ownSlot`) */
  private ownSlots = 0;
  /** per key of submitCoalesced: when the last submission went out, and the one waiting for the window's end */
  private readonly coalesced = new Map<string, { lastAt: number; waiting?: NodeJS.Timeout }>();
  /** coalesced submissions on their way: stop() lets them end before it closes the queue's connections */
  private readonly submitting = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(
    private readonly config: Config,
    private readonly orm: Orm,
    private readonly logger: Logger,
    databaseUrl: string,
  ) {
    this.workerName = config.WORKER_NAME ?? `${os.hostname()}-${process.pid}`;
    this.changes = new JobChanges(databaseUrl, logger);
    // The Postgres backend gets a pool of ours: its connections end when the queue stops, and an error of
    // an idle one (Postgres restarting or stopping) is logged — unheard, it would end the process.
    // Its commits do not wait for the WAL to reach the disk (`synchronous_commit` off): a queue job is a
    // wake-up call for the records (service_job, committed durably), and what a crash of Postgres could
    // take of the last commits is what the queue recovers from anyway — a queue job lost after its record
    // is queued again by the job sweeper (requeueWaiting), a lock lost is a lock expired (the queue job
    // runs again and claimJob answers the record it ran, or another), a removal lost is a queue job that
    // finds no record. Five WAL flushes a job fewer (its insert, lock, two state saves, removal).
    this.pool = config.MONGODB_URL ? undefined : new pg.Pool({ connectionString: databaseUrl, max: 5, options: '-c synchronous_commit=off' });
    this.pool?.on('error', (error) => logger.warn({ err: error }, 'job queue connection error'));
    const notifications = this.pool ? new QueueNotifications({ pool: this.pool }) : undefined;
    const backend: AgendaBackend = this.pool
      ? // the table comes with the service's migrations (Migration…Jobs), not from the library at connect time
        new PostgresBackend({ pool: this.pool, tableName: 'agenda_jobs', ensureSchema: false, disableNotifications: true })
      : new MongoBackend({ address: config.MONGODB_URL!, collection: 'agendaJobs' });
    const channel = notifications ?? backend.notificationChannel;
    (channel as unknown as NodeJS.EventEmitter | undefined)?.on?.('error', (error: Error) => logger.warn({ err: error }, 'job queue notification channel error'));
    const concurrency = Math.max(1, config.JOB_CONCURRENCY);
    this.agenda = new Agenda({
      backend,
      notificationChannel: notifications,
      name: this.workerName,
      maxConcurrency: concurrency,
      defaultConcurrency: concurrency,
      lockLimit: concurrency,
      defaultLockLifetime: config.JOB_LOCK_LIFETIME_MS,
      processEvery: config.JOB_POLL_MS,
      // a run removes its queue job itself (run()), so that Agenda frees the slot as soon as the run ends
      removeOnComplete: false,
    });
    this.agenda.on('error', (error: Error) => logger.warn({ err: error }, 'job queue error'));
  }

  /** The backend in use: `postgres` or `mongodb`. */
  get backendName(): 'postgres' | 'mongodb' {
    return this.config.MONGODB_URL ? 'mongodb' : 'postgres';
  }

  /**
   * Makes this process a worker for jobs named `name` (unless JOB_CONCURRENCY is 0). Call before start().
   * `ownSlot`: one run at a time, in a slot of its own beyond JOB_CONCURRENCY, so that its runs never
   * hold the slots of the other kinds: for a kind whose runs wait for jobs of other kinds (the
   * asynchronous deep check waits for a conversion), and for background work that a burst would
   * otherwise queue ahead of every conversion (previews: Agenda orders its queue by time, so a lower
   * priority alone would not let a conversion pass 1,000 queued thumbnails).
   */
  define(name: string, handler: JobHandler, options: { ownSlot?: boolean } = {}): void {
    if (this.config.JOB_CONCURRENCY === 0) return;
    this.handlers.set(name, handler);
    if (options.ownSlot) {
      this.ownSlots += 1;
      this.agenda.maxConcurrency(this.config.JOB_CONCURRENCY + this.ownSlots).lockLimit(this.config.JOB_CONCURRENCY + this.ownSlots);
    }
    const concurrency = options.ownSlot ? 1 : this.config.JOB_CONCURRENCY;
    // Agenda looks for the next queue job of a kind when one is submitted (NOTIFY) or at its next scan
    // (JOB_POLL_MS), not when a slot frees: queued conversions waited half a scan each between runs
    // (docs/benchmarks.md, job path). So when a run of this process ends, the workers are told to look
    // now, as a submission tells them, on the next turn of the event loop: Agenda frees the slot before
    // it (its microtasks after this event; the run removed its queue job itself, so nothing is awaited).
    this.agenda.on(`complete:${name}`, (job: Job, remote?: boolean) => {
      if (remote === true) return;
      setImmediate(() => {
        if (!this.stopping) void this.agenda.publishJobNotification(job);
      });
    });
    // a statement that runs away (a text Postgres parses slowly, a lock never released) fails its job instead of holding a core
    this.agenda.define(name, (job) => withStatementTimeout(this.config.JOB_STATEMENT_TIMEOUT_MS, () => this.run(job, name, handler)), {
      concurrency,
      // Agenda locks up to lockLimit queue jobs of a kind ahead of their run (0: up to the process's limit).
      // A job locked while it waits for a slot holds a slot of the process's limit that the jobs it waits
      // for need (queued deep checks blocked every conversion), and its lock is not renewed: it expires
      // and the job is taken again. So a kind never locks more than it can run at once.
      lockLimit: concurrency,
      lockLifetime: this.config.JOB_LOCK_LIFETIME_MS,
    });
  }

  /**
   * Records a job and queues it. Every process that submits must have started the queue: only a
   * started Agenda announces new jobs to the workers (NOTIFY); without it they find them only by polling.
   * `bounded`: refused with a 429 when its client has JOB_MAX_PENDING_PER_USER jobs pending.
   */
  async submit(em: EntityManager, job: NewJob, options: { bounded?: boolean } = {}): Promise<JobRecord> {
    const record = options.bounded
      ? await insertBoundedJob(em, job, this.config.JOB_MAX_PENDING_PER_USER, pendingRetryAfterSeconds)
      : await insertJob(em, job);
    return this.queue(em, record);
  }

  /**
   * Submits a job unless a job of its exclusive key is pending or running: answers that one then
   * (`submitted` false), so that calls made while it is active make no new job. For one still pending,
   * a queue job is added all the same (usually one too many, which takes nothing): its submitter may have
   * died between the record and its queue job, and it would hold the key unrun.
   */
  async submitExclusive(em: EntityManager, job: NewJob & { exclusiveKey: string }): Promise<{ record: JobRecord; submitted: boolean }> {
    const { record, inserted } = await insertExclusiveJob(em, job);
    if (inserted) await this.queue(em, record);
    else if (record.state === 'pending') await this.enqueue(record.jobName);
    return { record, submitted: inserted };
  }

  /**
   * Queues a job for a new record (it names the queue job that runs it when one takes it: the submitter
   * writes nothing more to it, so a worker taking it at once never finds it locked). When the queue
   * refuses, the record ends in panic: pending without a queue job, it would wait for another's.
   */
  private async queue(em: EntityManager, record: JobRecord): Promise<JobRecord> {
    try {
      await this.enqueue(record.jobName);
      return record;
    } catch (error) {
      await failJob(em, record.id, failureOf(error, this.config)).catch((unrecorded: unknown) =>
        this.logger.warn({ err: unrecorded, jobId: record.id }, 'a job the queue refused is left pending'),
      );
      throw error;
    }
  }

  /**
   * Submits `job()` without waiting (errors are logged): at once, unless a job with the same key went
   * out less than `windowMs` ago; then one submission at the end of that window stands for every call
   * made meanwhile. So every call is followed by a submission that starts after it, and at most one a
   * window goes out per key and process — for work that a job takes over in batches (text extraction),
   * where a job per call would cost more than the work. A submission still waiting when the queue stops,
   * or asked for while it stops, is dropped: such work must be found again without it (a sweep).
   */
  submitCoalesced(key: string, windowMs: number, job: () => NewJob): void {
    if (this.stopping) return;
    const state = this.coalesced.get(key) ?? { lastAt: -Infinity };
    this.coalesced.set(key, state);
    if (state.waiting) return;
    const send = () => {
      state.waiting = undefined;
      state.lastAt = performance.now();
      const submitted = this.submit(this.orm.em.fork() as EntityManager, job())
        .catch((error: unknown) => this.logger.warn({ err: error, key }, 'coalesced job not submitted'))
        .finally(() => this.submitting.delete(submitted));
      this.submitting.add(submitted);
    };
    const wait = state.lastAt + windowMs - performance.now();
    if (wait <= 0) send();
    else {
      state.waiting = setTimeout(send, wait);
      state.waiting.unref();
    }
  }

  /**
   * Queues one more queue job for each kind this process runs that has a record pending for more than
   * `olderThanMs`: its submitter may have died between the record and its queue job, which would leave it
   * waiting for another submission of its kind. One too many (a long queue that is draining) is harmless:
   * a queue job takes the record whose turn it is, and one that finds none ends at once. Answers the kinds.
   */
  async requeueWaiting(olderThanMs: number): Promise<string[]> {
    if (this.handlers.size === 0) return [];
    const kinds = await kindsWaitingLong(this.orm.em.fork() as EntityManager, [...this.handlers.keys()], olderThanMs);
    for (const kind of kinds) await this.enqueue(kind);
    return kinds;
  }

  /** The running record goes back to the queue, with a queue job to take it; a record cancelled meanwhile stays so. */
  private async requeue(em: EntityManager, record: JobRecord, requeue: Extract<JobOutcome, { requeue: unknown }>['requeue'], log: Logger): Promise<void> {
    if (await requeueJob(em, record.id, requeue.priority, requeue.note)) {
      await this.enqueue(record.jobName);
      log.info({ priority: requeue.priority }, 'job requeued');
    } else log.info('job cancelled');
  }

  /** A queue job of kind `name`: when it runs, it takes the record whose turn it is (`claimJob`). */
  private async enqueue(name: string): Promise<void> {
    await this.agenda.create(name, {}).save();
  }

  /** Runs the record a queue job takes, then removes the queue job (one that failed stays, as Agenda leaves it). */
  private async run(queueJob: Job, name: string, handler: JobHandler): Promise<void> {
    await this.runRecord(queueJob, name, handler);
    await queueJob.remove();
  }

  private async runRecord(queueJob: Job, name: string, handler: JobHandler): Promise<void> {
    const em = this.orm.em.fork() as EntityManager;
    const record = await claimJob(em, name, String(queueJob.attrs._id), this.workerName);
    // none pending: the record it was queued for was cancelled, or another queue job took it first
    if (!record) return;
    const jobId = record.id;
    const log = this.logger.child({ jobId, job: record.jobName, owner: record.owner, tries: record.tries });
    log.info('job started');
    const cancellation = new AbortController();
    const stopWatching = await this.watchCancellation(jobId, cancellation, log);
    let percentage = record.percentage;
    const touch = () => queueJob.touch(percentage).catch((error: unknown) => log.warn({ err: error }, 'job lock not renewed'));
    const heartbeat = setInterval(touch, Math.floor(this.config.JOB_LOCK_LIFETIME_MS / 3));
    try {
      const outcome = await handler({
        record,
        em,
        signal: cancellation.signal,
        progress: async (value, tx) => {
          const rounded = Math.round(value * 10) / 10;
          if (rounded === percentage) return;
          percentage = rounded;
          // the record is what clients read; the queue's lock (and its copy of the percentage) is renewed by
          // the heartbeat, so a page of progress costs one write, not two
          await reportProgress(tx ?? em, jobId, rounded);
        },
        whileRunning: (store) =>
          em.transactional(async (tx) => {
            if (!(await holdRunning(tx as EntityManager, jobId))) throw new JobCancelled(jobId);
            return store(tx as EntityManager);
          }),
        storeRows: async (place, statements, value) => {
          const rounded = value === undefined ? percentage : Math.round(value * 10) / 10;
          const progress = rounded === percentage ? [] : [progressStatement(jobId, rounded)];
          await shortTransaction(
            em,
            holdRunningStatement(jobId),
            async (rows: Parameters<typeof isRunning>[0]) => {
              if (!isRunning(rows)) throw new JobCancelled(jobId);
              await place();
            },
            [...statements, ...progress],
          );
          percentage = rounded;
        },
      });
      // a job cancelled meanwhile keeps its record as the cancellation left it
      if ('requeue' in outcome) await this.requeue(em, record, outcome.requeue, log);
      else if (await completeJob(em, jobId, outcome.result)) log.info('job done');
      else log.info('job cancelled');
    } catch (error) {
      const collisions = Number(record.serializedLowlevelRequest?.collisions ?? 0);
      if (cancellation.signal.aborted || error instanceof JobCancelled) log.info('job cancelled');
      else if (isTransientConflict(error) && collisions < collisionRequeues) {
        // Postgres gave up on a statement of the job because of a concurrent transaction (a deadlock with a
        // deletion): the job runs again from what it stored, as after a worker's death, instead of failing
        log.warn({ err: error, collisions: collisions + 1 }, 'job collided with a concurrent transaction');
        await this.requeue(em, record, { note: { collisions: collisions + 1 } }, log);
      } else {
        const failure = failureOf(isStatementTimeout(error) ? statementTimedOut(this.config) : error, this.config);
        await failJob(em, jobId, failure);
        log.info({ reasonCode: failure.reasonCode, message: failure.errorMessage }, 'job failed');
      }
    } finally {
      clearInterval(heartbeat);
      await stopWatching();
    }
  }

  /**
   * Aborts `cancellation` when the job's record turns `cancelled` (announced by whichever process
   * cancelled it); answers how to stop watching. Without the announcements (the listener cannot
   * connect) the job still stops at its next store (`whileRunning`).
   */
  private async watchCancellation(jobId: string, cancellation: AbortController, log: Logger): Promise<() => Promise<void>> {
    let changes: Awaited<ReturnType<JobChanges['watch']>>;
    try {
      changes = await this.changes.watch(jobId, 'states');
    } catch (error) {
      log.warn({ err: error }, 'the cancellation of the job is not listened for');
      return async () => undefined;
    }
    const cancelled = async () => (await jobState(this.orm.em.fork() as EntityManager, jobId)) === 'cancelled';
    void (async () => {
      // a cancellation made before listening began is in the record
      if (await cancelled()) return cancellation.abort(new JobCancelled(jobId));
      for (;;) {
        const next = await changes.next();
        if (next.done) return;
        // a change without a state: the listener reconnected, and changes may have been missed
        const state = next.value.state ?? ((await cancelled()) ? 'cancelled' : undefined);
        if (state === 'cancelled') return cancellation.abort(new JobCancelled(jobId));
      }
    })().catch((error: unknown) => log.warn({ err: error }, 'listening for the cancellation of the job failed'));
    return async () => {
      await changes.return?.();
    };
  }

  /** For the connection check: the queue is started here and its backend answers. */
  async check(): Promise<{ ok: boolean; message: string }> {
    const where = `${this.backendName} backend, worker ${this.workerName}, ${this.handlers.size} job kind(s) handled here`;
    if (!this.started) return { ok: false, message: `the job system is not running in this process (${where})` };
    try {
      if (this.pool) await this.pool.query('select 1 from agenda_jobs limit 1');
      else await this.agenda.queryJobs({ limit: 1 });
      return { ok: true, message: `the job system is running (${where})` };
    } catch (error) {
      return { ok: false, message: `the job system's ${this.backendName} backend does not answer: ${(error as Error).message}` };
    }
  }

  /** Connects the queue; with handlers defined, this process starts taking jobs. */
  async start(): Promise<void> {
    await this.agenda.start();
    this.started = true;
  }

  /** Waits up to `drainMs` for running jobs, then stops and closes the queue's connections. */
  async stop(drainMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const { waiting } of this.coalesced.values()) clearTimeout(waiting);
    this.coalesced.clear();
    await Promise.all(this.submitting);
    await this.changes.close();
    if (this.started) {
      this.started = false;
      if (this.handlers.size > 0) await this.agenda.drain({ timeout: drainMs });
      else await this.agenda.stop();
    }
    const pool = this.pool;
    if (pool && !pool.ending) await endPool(pool);
  }
}
