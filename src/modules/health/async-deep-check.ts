import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import { notFound } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { jobPriority } from '../jobs/queue.js';
import { findJob, type JobRecord } from '../jobs/records.js';
import type { JobQueue } from '../jobs/queue.js';
import { partitionOf, type RepositoryRecord } from '../repositories/operations.js';
import type { DeepCheckOptions } from './deep-check.js';

/** The job name of the asynchronous deep check (spec endpoint 12). */
export const deepCheckJobName = 'deepCheck';

/** The jobs of the administration domain, whose status `A/jobs/status` answers. */
const administrationJobNames: readonly string[] = [deepCheckJobName];

export const deepCheckOptionsOf = (config: Config): DeepCheckOptions => ({ timeoutMs: config.DEEP_CHECK_TIMEOUT_MS, waitMs: config.DEEP_CHECK_WAIT_MS });

/** Spec endpoint 12: records and queues a deep check of the repository, run by a worker as `principal`. */
export async function startDeepCheck(em: EntityManager, jobs: JobQueue, principal: Principal, repository: RepositoryRecord): Promise<JobRecord> {
  return jobs.submit(em, {
    repositoryId: repository.id,
    jobName: deepCheckJobName,
    conversionType: 'DEEP_CHECK',
    clientUsername: principal.userName,
    clientRoles: principal.roles,
    contentIds: [],
    inputFilenames: [],
    priority: jobPriority.normal,
    partition: partitionOf(repository.id),
    requestTypeShortName: 'AsyncDeepCheckRequest',
    requestTypeSignature: 'GET /v1/repository/async-deep-check',
    requestSelectiveInformation: `repositoryId=${repository.id}`,
    serializedRequest: { repositoryId: repository.id },
  });
}

/** `A/jobs/status`: a job of the administration domain (a conversion's id is not found here: it has `C/jobs/status`). */
export async function findAdministrationJob(em: EntityManager, jobId: string): Promise<JobRecord> {
  const job = await findJob(em, jobId);
  if (!job || !administrationJobNames.includes(job.jobName)) throw notFound(`administration job '${jobId}' not found`);
  return job;
}
