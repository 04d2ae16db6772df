import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import type { Logger } from '../../logger.js';
import type { Principal } from '../auth/principal.js';
import type { RepositoryRecord } from '../repositories/operations.js';

/** What every entry operation works in: a repository, on behalf of a caller, in one unit of work. */
export interface EntryScope {
  em: EntityManager;
  services: Services;
  principal: Principal;
  repository: RepositoryRecord;
  /** the request's logger (request id and caller bound) */
  logger: Logger;
}
