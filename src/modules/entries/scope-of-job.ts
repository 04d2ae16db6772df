import type { Services } from '../../context.js';
import { groupsOfUser } from '../auth/groups.js';
import type { Role } from '../auth/user.entity.js';
import type { JobRun } from '../jobs/queue.js';
import { currentRepository, repositoryNameOf } from '../repositories/operations.js';
import type { EntryScope } from './scope.js';

/**
 * The scope a job acts in: the client who started it, in its repository as stored now (its limits,
 * strategy and flags as the administrator last set them, not a process's cached copy).
 */
export async function jobScope({ record, em }: Pick<JobRun, 'record' | 'em'>, services: Services): Promise<EntryScope> {
  const repository = await currentRepository(em, repositoryNameOf(record.repositoryId));
  // the client's groups as they are now: a membership ended since the submission no longer counts
  const principal = { userName: record.clientUsername, roles: record.clientRoles as Role[], groups: await groupsOfUser(em, record.clientUsername) };
  return { em, services, repository, principal, logger: services.logger.child({ jobId: record.id, user: principal.userName }) };
}
