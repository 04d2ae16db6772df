import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Services } from '../../context.js';
import { notFound, ServiceError } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { failureOf, jobPriority } from '../jobs/queue.js';
import { completeJob, failAbandonedRun, failJob, findJob, insertExclusiveJob, type JobRecord, type NewJob } from '../jobs/records.js';
import type { JobQueue } from '../jobs/queue.js';
import { partitionOf, type RepositoryRecord } from '../repositories/operations.js';
import { deepCheck, deepCheckGraceMs, type DeepCheckOptions, type DeepCheckResult } from './deep-check.js';

/** The job name of the deep check (spec endpoint 12; endpoint 11's runs are recorded under it too). */
export const deepCheckJobName = 'deepCheck';

/** The jobs of the administration domain, whose status `A/jobs/status` answers. */
const administrationJobNames: readonly string[] = [deepCheckJobName];

export const deepCheckOptionsOf = (config: Config): DeepCheckOptions => ({ timeoutMs: config.DEEP_CHECK_TIMEOUT_MS, waitMs: config.DEEP_CHECK_WAIT_MS });

/** The record of a deep check of the repository: one pending or running per repository at a time (its exclusive key). */
const deepCheckJob = (principal: Principal, repository: RepositoryRecord, signature: string): NewJob & { exclusiveKey: string } => ({
  repositoryId: repository.id,
  jobName: deepCheckJobName,
  conversionType: 'DEEP_CHECK',
  clientUsername: principal.userName,
  clientRoles: principal.roles,
  exclusiveKey: `${deepCheckJobName}:${repository.id}`,
  contentIds: [],
  inputFilenames: [],
  priority: jobPriority.normal,
  partition: partitionOf(repository.id),
  requestTypeShortName: 'AsyncDeepCheckRequest',
  requestTypeSignature: signature,
  requestSelectiveInformation: `repositoryId=${repository.id}`,
  serializedRequest: { repositoryId: repository.id },
});

/** What a deep check's job record keeps of its result (`serializedResult`). */
export const deepCheckJobResult = (result: DeepCheckResult) => ({
  checkStatus: result.checkStatus,
  message: result.message,
  reportId: result._id,
  reportUrl: result.reportUrl,
  testTime: result.testTime,
});

/**
 * Spec endpoint 12: records and queues a deep check of the repository, run by a worker as `principal`;
 * while a deep check of the repository is pending or running (queued, or synchronous), that one is
 * answered instead (docs/administration.md).
 */
export async function startDeepCheck(em: EntityManager, jobs: JobQueue, principal: Principal, repository: RepositoryRecord): Promise<JobRecord> {
  const { record } = await jobs.submitExclusive(em, deepCheckJob(principal, repository, 'GET /v1/repository/async-deep-check'));
  return record;
}

/**
 * Spec endpoint 11: runs the deep check here and now, recorded as a running deep-check job of the
 * repository for its duration (ended with its result, A/jobs/status shows it). While another deep check
 * of the repository is pending or running: 409 `conflict` naming that job, whose result will be at
 * A/jobs/status. A record left running by a process that died ends once it is older than any run lasts.
 */
export async function runDeepCheck(services: Services, em: EntityManager, principal: Principal, repository: RepositoryRecord): Promise<DeepCheckResult> {
  const options = deepCheckOptionsOf(services.config);
  const job = deepCheckJob(principal, repository, 'GET /v1/repository/deep-check');
  await failAbandonedRun(em, job.exclusiveKey, options.timeoutMs + deepCheckGraceMs);
  const { record, inserted } = await insertExclusiveJob(em, job, services.jobs.workerName);
  if (!inserted) {
    throw new ServiceError(
      'conflict',
      `a deep check of repository '${repository.name}' is ${record.state} (job ${record.id}): its result will be at A/jobs/status?jobId=${record.id}`,
      `jobId=${record.id}`,
    );
  }
  try {
    const result = await deepCheck(services, principal, repository, options);
    await completeJob(em, record.id, deepCheckJobResult(result));
    return result;
  } catch (error) {
    await failJob(em, record.id, failureOf(error, services.config));
    throw error;
  }
}

/** `A/jobs/status`: a job of the administration domain (a conversion's id is not found here: it has `C/jobs/status`). */
export async function findAdministrationJob(em: EntityManager, jobId: string): Promise<JobRecord> {
  const job = await findJob(em, jobId);
  if (!job || !administrationJobNames.includes(job.jobName)) throw notFound(`administration job '${jobId}' not found`);
  return job;
}
