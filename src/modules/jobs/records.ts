import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { executePreparedText } from '../../db/prepared.js';
import type { Statement } from '../../db/short-transaction.js';
import { notFound, ServiceError } from '../../errors.js';

export const jobStates = ['pending', 'running', 'Done', 'panic', 'cancelled'] as const;
export type JobState = (typeof jobStates)[number];
export const finalStates: readonly JobState[] = ['Done', 'panic', 'cancelled'];

/** The job record: every field of the spec's `serviceRequestJob`, plus what a worker needs to act for the client. */
export interface JobRecord {
  id: string;
  repositoryId: string;
  jobName: string;
  conversionType: string;
  queueJobId: string | null;
  clientSessionId: string | null;
  clientUsername: string;
  clientRoles: string[];
  /** whose turn the job takes in the queue: its client; for a text extraction, the uploader of its texts */
  owner: string;
  /** jobs of one key are pending or running one at a time (a repository's reindex, its deep check) */
  exclusiveKey: string | null;
  contentIds: string[];
  inputFilenames: string[];
  displayFilename: string | null;
  targetName: string | null;
  resultAction: string | null;
  state: JobState;
  percentage: number;
  priority: number;
  tries: number;
  revivable: boolean;
  createdAt: Date;
  startTimestamp: Date | null;
  endTimestamp: Date | null;
  lastStatusUpdate: Date;
  workerName: string | null;
  errorMessage: string | null;
  reasonCode: string | null;
  stackTrace: string | null;
  partition: string;
  requestSelectiveInformation: string | null;
  requestTypeShortName: string | null;
  requestTypeSignature: string | null;
  serializedRequest: Record<string, unknown>;
  serializedLowlevelRequest: Record<string, unknown> | null;
  serializedResult: Record<string, unknown> | null;
}

export type NewJob = Pick<JobRecord, 'repositoryId' | 'jobName' | 'conversionType' | 'clientUsername' | 'clientRoles' | 'contentIds' | 'inputFilenames' | 'partition' | 'serializedRequest'> &
  Partial<
    Pick<
      JobRecord,
      'owner' | 'exclusiveKey' | 'clientSessionId' | 'displayFilename' | 'targetName' | 'resultAction' | 'priority' | 'requestSelectiveInformation' | 'requestTypeShortName' | 'requestTypeSignature'
    >
  >;

/** Channel of Postgres NOTIFY with `{id, state, percentage}` of a job whose record changed (read by every process). */
export const jobChangesChannel = 'service_job_changes';
/**
 * The same for a change of state only (sent besides the one above): what a running job listens for (its
 * cancellation). Apart, so that a worker is not sent its own job's progress, page by page, unless a
 * subscription of its process watches jobs.
 */
export const jobStatesChannel = 'service_job_states';

/** The select list announcing the rows of `changed` (job records as changed): on both channels when their state changed. */
const announced = (changesState: boolean) => {
  const payload = `json_build_object('id', changed.id, 'state', changed.state, 'percentage', changed.percentage)::text`;
  return `changed.*, pg_notify('${jobChangesChannel}', ${payload})${changesState ? `, pg_notify('${jobStatesChannel}', ${payload})` : ''}`;
};

const columns = `id, repository_id, job_name, conversion_type, queue_job_id, client_session_id, client_username, client_roles, owner, exclusive_key,
  content_ids, input_filenames, display_filename, target_name, result_action, state, percentage, priority, tries, revivable,
  created_at, start_timestamp, end_timestamp, last_status_update, worker_name, error_message, reason_code, stack_trace,
  partition, request_selective_information, request_type_short_name, request_type_signature, serialized_request,
  serialized_lowlevel_request, serialized_result`;

const toRecord = (row: Record<string, any>): JobRecord => ({
  id: row.id,
  repositoryId: row.repository_id,
  jobName: row.job_name,
  conversionType: row.conversion_type,
  queueJobId: row.queue_job_id,
  clientSessionId: row.client_session_id,
  clientUsername: row.client_username,
  clientRoles: row.client_roles,
  owner: row.owner,
  exclusiveKey: row.exclusive_key,
  contentIds: row.content_ids,
  inputFilenames: row.input_filenames,
  displayFilename: row.display_filename,
  targetName: row.target_name,
  resultAction: row.result_action,
  state: row.state,
  percentage: Number(row.percentage),
  priority: row.priority,
  tries: row.tries,
  revivable: row.revivable,
  createdAt: new Date(row.created_at),
  startTimestamp: row.start_timestamp ? new Date(row.start_timestamp) : null,
  endTimestamp: row.end_timestamp ? new Date(row.end_timestamp) : null,
  lastStatusUpdate: new Date(row.last_status_update),
  workerName: row.worker_name,
  errorMessage: row.error_message,
  reasonCode: row.reason_code,
  stackTrace: row.stack_trace,
  partition: row.partition,
  requestSelectiveInformation: row.request_selective_information,
  requestTypeShortName: row.request_type_short_name,
  requestTypeSignature: row.request_type_signature,
  serializedRequest: row.serialized_request,
  serializedLowlevelRequest: row.serialized_lowlevel_request,
  serializedResult: row.serialized_result,
});

/** The kinds of job of a conversion (POST C/convert/image, C/convert/merge), whose changes of state are events. */
export const convertJobName = 'convert';
export const mergeJobName = 'merge';
/** A version's preview (DESIGN §12): its changes of state are events too, so a client learns the thumbnail is there. */
export const thumbnailJobName = 'thumbnail';

/**
 * A common table expression recording JOB_STATE_CHANGED (DESIGN §11) for each conversion or preview job among the
 * rows of `source` (job records as changed): part of the change's own statement, so of its transaction.
 */
const stateEvents = (source: string) => `state_events as (
       insert into event (repository_id, repository, type, entry_id, chronical_id, actor, details)
       select s.repository_id, r.name, 'JOB_STATE_CHANGED', s.content_ids[1], (select chronical_id from entry where id = s.content_ids[1]),
              case when s.job_name = '${thumbnailJobName}' then null else s.client_username end, jsonb_build_object('jobId', s.id, 'jobName', s.job_name, 'state', s.state)
         from ${source} s left join repository r on r.id = s.repository_id
        where s.job_name in ('${convertJobName}', '${mergeJobName}', '${thumbnailJobName}'))`;

/**
 * Changes job records and announces each change (NOTIFY, delivered at commit) in one statement: every
 * change of state or percentage reaches subscribers in any process; a change of state (`changesState`)
 * is recorded as an event in the same statement. Returns the records after the change.
 */
async function changeJobs(
  em: EntityManager,
  assignments: string,
  parameters: unknown[],
  where: string,
  whereParameters: unknown[],
  changesState = false,
): Promise<JobRecord[]> {
  const { sql, params } = changeStatement(assignments, parameters, where, whereParameters, changesState);
  // prepared: a job's run changes its record several times (its start, its engine's request, its end), and Postgres planned each of these statements anew
  const rows = await executePreparedText<Record<string, any>>(em, sql, params);
  return rows.map(toRecord);
}

/** The statement of changeJobs; `returned`: the columns it answers (the state events read every column). */
function changeStatement(assignments: string, parameters: unknown[], where: string, whereParameters: unknown[], changesState: boolean, returned = columns): Statement {
  return {
    sql: `with changed as (
       update service_job set ${assignments}, last_status_update = clock_timestamp() where ${where} returning ${returned})${changesState ? `, ${stateEvents('changed')}` : ''}
     select ${announced(changesState)} from changed`,
    params: [...parameters, ...whereParameters],
  };
}

/** Changes one job record (see changeJobs); undefined when `where` excluded it. */
async function changeJob(em: EntityManager, id: string, assignments: string, parameters: unknown[], where = 'true', changesState = false): Promise<JobRecord | undefined> {
  return (await changeJobs(em, assignments, parameters, `id = ? and (${where})`, [id], changesState))[0];
}

/**
 * Changes one job record's fields other than its state and percentage (its engine's request, its
 * partial result, its contents): nothing a subscriber is told of (it follows state and percentage), so
 * nothing is announced, and nothing is answered but whether `where` let the change through.
 */
async function noteJob(em: EntityManager, id: string, assignments: string, parameters: unknown[], where = 'true'): Promise<boolean> {
  const rows = await executePreparedText(em, `update service_job set ${assignments}, last_status_update = clock_timestamp() where id = ? and (${where}) returning id`, [...parameters, id]);
  return rows.length > 0;
}

/** A text[] from a JSON array parameter (the driver would spread a JS array into several parameters). */
const textArray = 'array(select jsonb_array_elements_text(?::jsonb))';

/** The insert of a new record, pending — or running on `runningOn` (a run that is not queued: the synchronous deep check). */
function insertion(job: NewJob, runningOn?: string): { sql: string; parameters: unknown[] } {
  return {
    sql: `insert into service_job (id, repository_id, job_name, conversion_type, client_session_id, client_username, client_roles, owner, exclusive_key,
       content_ids, input_filenames, display_filename, target_name, result_action, priority, partition,
       request_selective_information, request_type_short_name, request_type_signature, serialized_request,
       state, tries, worker_name, start_timestamp)
     values (?, ?, ?, ?, ?, ?, ${textArray}, ?, ?, ${textArray}, ${textArray}, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb,
       ?, ?, ?, case when ?::boolean then clock_timestamp() end)`,
    parameters: [
      randomUUID(),
      job.repositoryId,
      job.jobName,
      job.conversionType,
      job.clientSessionId ?? null,
      job.clientUsername,
      JSON.stringify(job.clientRoles),
      job.owner ?? job.clientUsername,
      job.exclusiveKey ?? null,
      JSON.stringify(job.contentIds),
      JSON.stringify(job.inputFilenames),
      job.displayFilename ?? null,
      job.targetName ?? null,
      job.resultAction ?? null,
      job.priority ?? 0,
      job.partition,
      job.requestSelectiveInformation ?? null,
      job.requestTypeShortName ?? null,
      job.requestTypeSignature ?? null,
      JSON.stringify(job.serializedRequest),
      runningOn ? 'running' : 'pending',
      runningOn ? 1 : 0,
      runningOn ?? null,
      runningOn !== undefined,
    ],
  };
}

export async function insertJob(em: EntityManager, job: NewJob): Promise<JobRecord> {
  const { sql, parameters } = insertion(job);
  const rows: Record<string, any>[] = await em.execute(`with inserted as (${sql} returning ${columns}), ${stateEvents('inserted')} select * from inserted`, parameters);
  return toRecord(rows[0]!);
}

/** The class of the two-key advisory lock on a user's pending jobs (entries/chronicles.ts has 1 and 2). */
const pendingJobsLockClass = 3;

/**
 * Inserts the job unless its client has `maxPending` jobs pending already: then a 429 with `Retry-After`
 * (`retryAfterSeconds`). Submissions of one client are counted one after another (an advisory lock on
 * the client's name), so concurrent ones cannot pass the bound together.
 */
export async function insertBoundedJob(em: EntityManager, job: NewJob, maxPending: number, retryAfterSeconds: number): Promise<JobRecord> {
  return em.transactional(async (tx) => {
    await tx.execute(`select pg_advisory_xact_lock(?, hashtext(?))`, [pendingJobsLockClass, job.clientUsername]);
    const [{ pending }] = await tx.execute<[{ pending: number }]>(`select count(*)::int as pending from service_job where client_username = ? and state = 'pending'`, [
      job.clientUsername,
    ]);
    if (pending >= maxPending) {
      throw new ServiceError(
        'tooManyRequests',
        `${job.clientUsername} has ${pending} jobs queued, the most one user may have (JOB_MAX_PENDING_PER_USER): retry when some have started, or cancel some (POST C/jobs/cancel)`,
        undefined,
        retryAfterSeconds,
      );
    }
    return insertJob(tx as EntityManager, job);
  });
}

/**
 * Inserts the job unless a job of its exclusive key is pending or running (the unique index
 * `service_job_exclusive_idx` decides, so concurrent submissions make one): answers that one then.
 * `runningOn`: the record is inserted running on that worker (a run that is not queued).
 */
export async function insertExclusiveJob(
  em: EntityManager,
  job: NewJob & { exclusiveKey: string },
  runningOn?: string,
): Promise<{ record: JobRecord; inserted: boolean }> {
  const { sql, parameters } = insertion(job, runningOn);
  // the active one may end between the insert and the read: then the insert goes through the next time
  for (;;) {
    const [inserted] = await em.execute<Record<string, any>[]>(
      `${sql} on conflict (exclusive_key) where state in ('pending', 'running') do nothing returning ${columns}`,
      parameters,
    );
    if (inserted) return { record: toRecord(inserted), inserted: true };
    const [active] = await em.execute<Record<string, any>[]>(`select ${columns} from service_job where exclusive_key = ? and state in ('pending', 'running')`, [
      job.exclusiveKey,
    ]);
    if (active) return { record: toRecord(active), inserted: false };
  }
}

/**
 * Ends in `panic` a run of `exclusiveKey` that is not queued (inserted running by `insertExclusiveJob`)
 * and has not changed for `olderThanMs`: its process died before it ended it, and it would keep the key.
 */
export const failAbandonedRun = (em: EntityManager, exclusiveKey: string, olderThanMs: number) =>
  changeJobs(
    em,
    `state = 'panic', reason_code = 'internal', error_message = 'the process running it ended before the job did', end_timestamp = clock_timestamp(), revivable = false`,
    [],
    `exclusive_key = ? and state = 'running' and queue_job_id is null and last_status_update < clock_timestamp() - (? * interval '1 millisecond')`,
    [exclusiveKey, olderThanMs],
    true,
  );

export async function findJob(em: EntityManager, id: string): Promise<JobRecord | undefined> {
  const rows = await executePreparedText<Record<string, any>>(em, `select ${columns} from service_job where id = ?`, [id]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The state of a job, alone (a running job's check for its cancellation: not the whole record, its JSON parsed for nothing). */
export async function jobState(em: EntityManager, id: string): Promise<JobState | undefined> {
  const rows = await executePreparedText<{ state: JobState }>(em, `select state from service_job where id = ?`, [id]);
  return rows[0]?.state;
}

/** The job of a repository (a job of another repository is not found: ids do not leak across). */
export async function requireJob(em: EntityManager, repositoryId: string, id: string): Promise<JobRecord> {
  const job = await findJob(em, id);
  if (!job || job.repositoryId !== repositoryId) throw notFound(`job '${id}' not found`);
  return job;
}

export async function listJobs(
  em: EntityManager,
  repositoryId: string,
  options: { state?: JobState; clientUsername?: string; limit: number; offset: number },
): Promise<{ count: number; entries: JobRecord[] }> {
  const filter = `repository_id = ? and (?::text is null or state = ?) and (?::text is null or client_username = ?)`;
  const parameters = [repositoryId, options.state ?? null, options.state ?? null, options.clientUsername ?? null, options.clientUsername ?? null];
  const [rows, counted] = await Promise.all([
    em.execute(`select ${columns} from service_job where ${filter} order by created_at desc, id limit ? offset ?`, [...parameters, options.limit, options.offset]),
    em.execute(`select count(*)::int as count from service_job where ${filter}`, parameters),
  ]);
  return { count: (counted[0] as { count: number }).count, entries: (rows as Record<string, any>[]).map(toRecord) };
}

/**
 * The queue job `queueJobId` (of kind `jobName`) takes a job for the worker `workerName`: the job it ran
 * before when it runs again (its worker died: the queue lock expired), else the pending job whose
 * owner's turn is the oldest (`job_turn`: an owner who never had one first), the highest priority
 * first; the owner's turn is now. `tries` counts every start. Undefined when there is none. Records
 * locked by another statement are skipped: only claims (and cancellations) lock pending records, so a
 * record skipped is being taken by another queue job (or leaves the queue).
 */
export async function claimJob(em: EntityManager, jobName: string, queueJobId: string, workerName: string): Promise<JobRecord | undefined> {
  const rows = await executePreparedText<Record<string, any>>(
    em,
    `with resumed as (
       select id from service_job where queue_job_id = ? and state = 'running' and job_name = ?),
     picked as (
       select j.id, j.owner from service_job j left join job_turn t on t.job_name = j.job_name and t.owner = j.owner
        where j.job_name = ? and j.state = 'pending' and not exists (select 1 from resumed)
        order by j.priority desc, t.last_turn_at nulls first, j.created_at, j.id
        limit 1 for update of j skip locked),
     turn as (
       insert into job_turn (job_name, owner, last_turn_at) select ?, owner, clock_timestamp() from picked
       on conflict (job_name, owner) do update set last_turn_at = excluded.last_turn_at),
     changed as (
       update service_job set state = 'running', tries = tries + 1, worker_name = ?, queue_job_id = ?,
              start_timestamp = coalesce(start_timestamp, clock_timestamp()), last_status_update = clock_timestamp()
        where id = (select id from resumed union all select id from picked limit 1) and state in ('pending', 'running') returning ${columns}),
     ${stateEvents('(select changed.* from changed join picked on picked.id = changed.id)')}
     select ${announced(true)} from changed`,
    [queueJobId, jobName, jobName, jobName, workerName, queueJobId],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * Whether a job of kind `jobName` of an owner other than `owner` waits for a slot: a job that works
 * through many items (text extraction) then gives its slot up after its turn.
 */
export async function othersWaiting(em: EntityManager, jobName: string, owner: string): Promise<boolean> {
  const rows = await em.execute(`select 1 from service_job where job_name = ? and state = 'pending' and owner <> ? limit 1`, [jobName, owner]);
  return rows.length > 0;
}

/** The kinds among `jobNames` that have a record pending since more than `olderThanMs` ago. */
export async function kindsWaitingLong(em: EntityManager, jobNames: string[], olderThanMs: number): Promise<string[]> {
  const rows = await em.execute<{ job_name: string }[]>(
    `select distinct job_name from service_job where state = 'pending' and created_at < now() - make_interval(secs => ?)`,
    [olderThanMs / 1000],
  );
  return rows.map((row) => row.job_name).filter((name) => jobNames.includes(name));
}

/**
 * Reads the job's state while holding its record (`for share`) for the rest of the transaction `em` is
 * in: a cancellation (which updates the record) waits for that transaction, so what it stores after
 * this check is stored before the cancellation, or not at all. Answers whether the job is running.
 */
export async function holdRunning(em: EntityManager, id: string): Promise<boolean> {
  const { sql, params } = holdRunningStatement(id);
  return isRunning(await em.execute<{ state: JobState }[]>(sql, params));
}

/** The statement of holdRunning, and how to read its rows (isRunning). */
export const holdRunningStatement = (id: string): Statement => ({ sql: `select state from service_job where id = ? for share`, params: [id] });
export const isRunning = (rows: { state: JobState }[]) => rows[0]?.state === 'running';

/** Cancels a pending or running job, saying why (`errorMessage`); undefined when it had ended. */
export const markCancelled = (em: EntityManager, id: string, why: string) =>
  changeJob(em, id, `state = 'cancelled', error_message = ?, end_timestamp = clock_timestamp()`, [why], `state in ('pending', 'running')`, true);

/** Cancels every pending or running job of a client (its user is deleted), in `em`'s transaction. */
export const markClientJobsCancelled = (em: EntityManager, clientUsername: string, why: string) =>
  changeJobs(em, `state = 'cancelled', error_message = ?, end_timestamp = clock_timestamp()`, [why], `client_username = ? and state in ('pending', 'running')`, [clientUsername], true);

export const reportProgress = async (em: EntityManager, id: string, percentage: number) => {
  const { sql, params } = progressStatement(id, percentage);
  await executePreparedText(em, sql, params);
};

/**
 * The statement of reportProgress, for a transaction outside the ORM too (JobRun.storeRows): it answers
 * only what it announces (the whole record, its JSON included, was parsed for nothing once a page).
 */
export const progressStatement = (id: string, percentage: number): Statement =>
  changeStatement('percentage = ?', [Math.max(0, Math.min(100, percentage))], `id = ? and (state = 'running')`, [id], false, 'id, state, percentage');

/** The running job goes back to the queue: with another priority (LOW_PRIORITY strategy), or as it is (it gave its turn up). */
export const requeueJob = (em: EntityManager, id: string, priority: number | undefined, note: Record<string, unknown> | undefined) =>
  changeJob(
    em,
    id,
    `state = 'pending', priority = coalesce(?, priority), serialized_lowlevel_request = coalesce(serialized_lowlevel_request, '{}'::jsonb) || ?::jsonb`,
    [priority ?? null, JSON.stringify(note ?? {})],
    `state = 'running'`,
    true,
  );

export const completeJob = (em: EntityManager, id: string, result: Record<string, unknown>) =>
  changeJob(
    em,
    id,
    `state = 'Done', percentage = 100, serialized_result = ?::jsonb, end_timestamp = clock_timestamp()`,
    [JSON.stringify(result)],
    `state = 'running'`,
    true,
  );

export const failJob = (em: EntityManager, id: string, failure: { reasonCode: string; errorMessage: string; stackTrace: string }) =>
  changeJob(
    em,
    id,
    `state = 'panic', reason_code = ?, error_message = ?, stack_trace = ?, end_timestamp = clock_timestamp(), revivable = false`,
    [failure.reasonCode, failure.errorMessage, failure.stackTrace],
    `state in ('pending', 'running')`,
    true,
  );

/** Adds contents (and their names) to what the record lists: a job that finds its work as it goes (text extraction). */
export const addJobContents = (em: EntityManager, id: string, contentIds: string[], inputFilenames: string[]) =>
  noteJob(
    em,
    id,
    `content_ids = array(select distinct unnest(content_ids || ${textArray})), input_filenames = array(select distinct unnest(input_filenames || ${textArray}))`,
    [JSON.stringify(contentIds), JSON.stringify(inputFilenames)],
  );

/**
 * Records what the job asks of its engine (`serializedLowlevelRequest`), merged into what is there
 * already (a LOW_PRIORITY lowering's note).
 */
export const saveLowlevelRequest = (em: EntityManager, id: string, request: Record<string, unknown>) =>
  noteJob(em, id, `serialized_lowlevel_request = coalesce(serialized_lowlevel_request, '{}'::jsonb) || ?::jsonb`, [JSON.stringify(request)]);

/** Saves a partial result (pages done so far), so that a retried job does not redo or duplicate them. */
export const saveJobResult = (em: EntityManager, id: string, result: Record<string, unknown>) =>
  noteJob(em, id, 'serialized_result = ?::jsonb', [JSON.stringify(result)], `state = 'running'`);

/** Duration of a job: from its creation to its end (or to now while it runs). */
export const durationOf = (job: JobRecord) => (job.endTimestamp ?? new Date()).getTime() - job.createdAt.getTime();
