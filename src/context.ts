import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import type { Orm } from './db/orm.js';
import type { SnapshotReaders } from './db/snapshot-readers.js';
import type { Logger } from './logger.js';
import type { AuthServices } from './modules/auth/index.js';
import { resolveSession } from './modules/auth/index.js';
import type { Principal } from './modules/auth/index.js';
import type { AclCache } from './modules/access/index.js';
import type { JobQueue } from './modules/jobs/index.js';
import type { LiveEvents } from './modules/events/index.js';
import type { RepositoryCache } from './modules/repositories/index.js';
import type { ByteStore } from './storage/store.js';

/** Long-lived parts every operation may use. */
export interface Services {
  config: Config;
  logger: Logger;
  orm: Orm;
  /** statements run beside a transaction, in its snapshot (a search's count beside its ranked page) */
  snapshotReaders: SnapshotReaders;
  /** content bytes (resources) and cache bytes (page images): the file system or S3 (DESIGN §14) */
  contentStore: ByteStore;
  cacheStore: ByteStore;
  /** the session cache, login limits and password hashing queue of this process */
  auth: AuthServices;
  /** background jobs (conversion, …): submitted from any process, run by the workers */
  jobs: JobQueue;
  /** repositories read in the last seconds, forgotten when one changes (any process) */
  repositories: RepositoryCache;
  /** stored ACLs and callers' readable sets this process has read (DESIGN §10) */
  acls: AclCache;
  /** committed events relayed to this process's `contentEvents` subscribers */
  liveEvents: LiveEvents;
}

/** Per-request context of subgraph resolvers: who calls, with a fresh entity manager. */
export interface RequestContext {
  requestId: string;
  /** the service's logger, bound to this request's id */
  logger: Logger;
  services: Services;
  /** the request's unit of work, made when first used */
  readonly em: EntityManager;
  /** the session id from `Authorization: Bearer <id>` (the REST layer moves `sessionId` there) */
  sessionToken?: string;
  /** the caller, resolved once per request; a 401 without a valid session */
  principal(): Promise<Principal>;
  /** the caller's address, for rate limiting */
  address: string;
}

export function bearerToken(authorization: string | null | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return match?.[1];
}

export function createRequestContext(services: Services, headers: Headers): RequestContext {
  let em: EntityManager | undefined;
  const sessionToken = bearerToken(headers.get('authorization'));
  let principal: Promise<Principal> | undefined;
  const requestId = headers.get('x-request-id') ?? 'internal';
  let logger: Logger | undefined;
  return {
    requestId,
    // made when first used: most requests log nothing, and a child logger costs (ingest profile: ~1 % of the main thread)
    get logger() {
      return (logger ??= services.logger.child({ requestId }));
    },
    services,
    // made when first used: a read the caches and the read verb answer needs no unit of work, and
    // making one (an ORM fork) was a measurable part of such a read (docs/benchmarks.md)
    get em() {
      return (em ??= services.orm.em.fork() as EntityManager);
    },
    sessionToken,
    address: headers.get(clientAddressHeader) ?? 'unknown',
    // the session's statements hold no entity: they run on the ORM's pool, outside the unit of work
    principal: () => (principal ??= resolveSession(services.orm.em, services, sessionToken)),
  };
}

/** Set by the HTTP layer from the socket (a client's own value is overwritten): used for rate limiting. */
export const clientAddressHeader = 'x-client-address';
