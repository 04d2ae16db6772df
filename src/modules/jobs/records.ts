import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../errors.js';

export type JobState = 'pending' | 'running' | 'Done' | 'panic' | 'cancelled';
export const jobStates: readonly JobState[] = ['pending', 'running', 'Done', 'panic', 'cancelled'];
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
  Partial<Pick<JobRecord, 'clientSessionId' | 'displayFilename' | 'targetName' | 'resultAction' | 'priority' | 'requestSelectiveInformation' | 'requestTypeShortName' | 'requestTypeSignature'>>;

/** Channel of Postgres NOTIFY with `{id, state, percentage}` of a job whose record changed (read by every process). */
export const jobChangesChannel = 'service_job_changes';

const columns = `id, repository_id, job_name, conversion_type, queue_job_id, client_session_id, client_username, client_roles,
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

/**
 * Changes one job record and announces it (NOTIFY, delivered at commit) in one statement: every change
 * of state or percentage reaches subscribers in any process. Returns the record after the change, or
 * undefined when `where` excluded it.
 */
async function changeJob(em: EntityManager, id: string, assignments: string, parameters: unknown[], where = 'true'): Promise<JobRecord | undefined> {
  const rows: Record<string, any>[] = await em.execute(
    `with changed as (
       update service_job set ${assignments}, last_status_update = clock_timestamp() where id = ? and (${where}) returning ${columns})
     select changed.*, pg_notify('${jobChangesChannel}', json_build_object('id', changed.id, 'state', changed.state, 'percentage', changed.percentage)::text)
       from changed`,
    [...parameters, id],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** A text[] from a JSON array parameter (the driver would spread a JS array into several parameters). */
const textArray = 'array(select jsonb_array_elements_text(?::jsonb))';

export async function insertJob(em: EntityManager, job: NewJob): Promise<JobRecord> {
  const rows: Record<string, any>[] = await em.execute(
    `insert into service_job (id, repository_id, job_name, conversion_type, client_session_id, client_username, client_roles,
       content_ids, input_filenames, display_filename, target_name, result_action, priority, partition,
       request_selective_information, request_type_short_name, request_type_signature, serialized_request)
     values (?, ?, ?, ?, ?, ?, ${textArray}, ${textArray}, ${textArray}, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb) returning ${columns}`,
    [
      randomUUID(),
      job.repositoryId,
      job.jobName,
      job.conversionType,
      job.clientSessionId ?? null,
      job.clientUsername,
      JSON.stringify(job.clientRoles),
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
    ],
  );
  return toRecord(rows[0]!);
}

export async function findJob(em: EntityManager, id: string): Promise<JobRecord | undefined> {
  const rows: Record<string, any>[] = await em.execute(`select ${columns} from service_job where id = ?`, [id]);
  return rows[0] ? toRecord(rows[0]) : undefined;
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

export const recordQueueJob = (em: EntityManager, id: string, queueJobId: string) => changeJob(em, id, 'queue_job_id = ?', [queueJobId]);

/** A worker takes the job (again, after a worker died: `tries` counts every start). Undefined when it already ended. */
export const startJob = (em: EntityManager, id: string, workerName: string) =>
  changeJob(
    em,
    id,
    `state = 'running', tries = tries + 1, worker_name = ?, start_timestamp = coalesce(start_timestamp, clock_timestamp())`,
    [workerName],
    `state in ('pending', 'running')`,
  );

export const reportProgress = (em: EntityManager, id: string, percentage: number) =>
  changeJob(em, id, 'percentage = ?', [Math.max(0, Math.min(100, percentage))], `state = 'running'`);

/** The job goes back to the queue with another priority (LOW_PRIORITY strategy). */
export const requeueJob = (em: EntityManager, id: string, priority: number, note: Record<string, unknown>) =>
  changeJob(em, id, `state = 'pending', priority = ?, serialized_lowlevel_request = coalesce(serialized_lowlevel_request, '{}'::jsonb) || ?::jsonb`, [priority, JSON.stringify(note)]);

export const completeJob = (em: EntityManager, id: string, result: Record<string, unknown>) =>
  changeJob(
    em,
    id,
    `state = 'Done', percentage = 100, serialized_result = ?::jsonb, end_timestamp = clock_timestamp()`,
    [JSON.stringify(result)],
    `state = 'running'`,
  );

export const failJob = (em: EntityManager, id: string, failure: { reasonCode: string; errorMessage: string; stackTrace: string }) =>
  changeJob(
    em,
    id,
    `state = 'panic', reason_code = ?, error_message = ?, stack_trace = ?, end_timestamp = clock_timestamp(), revivable = false`,
    [failure.reasonCode, failure.errorMessage, failure.stackTrace],
    `state in ('pending', 'running')`,
  );

/** Adds contents (and their names) to what the record lists: a job that finds its work as it goes (text extraction). */
export const addJobContents = (em: EntityManager, id: string, contentIds: string[], inputFilenames: string[]) =>
  changeJob(
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
  changeJob(em, id, `serialized_lowlevel_request = coalesce(serialized_lowlevel_request, '{}'::jsonb) || ?::jsonb`, [JSON.stringify(request)]);

/** Saves a partial result (pages done so far), so that a retried job does not redo or duplicate them. */
export const saveJobResult = (em: EntityManager, id: string, result: Record<string, unknown>) =>
  changeJob(em, id, 'serialized_result = ?::jsonb', [JSON.stringify(result)]);

/** Duration of a job: from its creation to its end (or to now while it runs). */
export const durationOf = (job: JobRecord) => (job.endTimestamp ?? new Date()).getTime() - job.createdAt.getTime();
