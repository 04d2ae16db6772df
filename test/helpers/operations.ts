import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../../src/config.js';
import type { Services } from '../../src/context.js';
import { createOrm } from '../../src/db/orm.js';
import { SnapshotReaders } from '../../src/db/snapshot-readers.js';
import { createLogger } from '../../src/logger.js';
import type { Principal, Role } from '../../src/modules/auth/index.js';
import { entities } from '../../src/modules/entities.js';
import type { EntryScope } from '../../src/modules/entries/index.js';
import { stageUpload } from '../../src/modules/entries/index.js';
import { ensureDefaultRepository } from '../../src/modules/repositories/index.js';
import { RepositoryCache } from '../../src/modules/repositories/index.js';
import { AclCache } from '../../src/modules/access/index.js';
import { openStores } from '../../src/storage/stores.js';
import { createTestDatabase } from './service.js';
import { addMember, createAuthServices, createGroup, groupsOfUser } from '../../src/modules/auth/index.js';
import { JobQueue } from '../../src/modules/jobs/index.js';
import { LiveEvents } from '../../src/modules/events/index.js';

/** Services over a fresh database from the migrated template and a temporary data folder: operations without HTTP. */
export interface OperationsBench {
  services: Services;
  /** a scope of `repositoryName` (default: the default repository) for `userName`, with the user's groups as stored (a fresh unit of work, as one request has) */
  scopeOf(userName: string, roles?: Role[], repositoryName?: string): Promise<EntryScope>;
  /** a pending upload of `scope`'s caller holding `text` */
  stage(scope: EntryScope, text?: string, fileName?: string): Promise<string>;
  /** users of role USER (no password: they act through `scopeOf`) and groups of them, as an administrator makes them */
  addUsers(users: readonly string[], groups?: Readonly<Record<string, readonly string[]>>): Promise<void>;
  stop(): Promise<void>;
}

export async function createOperationsBench(): Promise<OperationsBench> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-operations-'));
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ADMIN_PASSWORD: 'unused-here' });
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const orm = await createOrm(databaseUrl, logger, { poolMax: 10, entities });
  const { contentStore, cacheStore } = await openStores(config, async () => false);
  const services: Services = {
    config,
    logger,
    orm,
    contentStore,
    cacheStore,
    auth: createAuthServices(databaseUrl, logger),
    snapshotReaders: new SnapshotReaders(databaseUrl, logger),
    jobs: new JobQueue(config, orm, logger, databaseUrl),
    repositories: new RepositoryCache(),
    acls: new AclCache(),
    liveEvents: new LiveEvents(orm, logger),
  };
  await ensureDefaultRepository(orm.em.fork() as EntityManager, config, config.DEFAULT_REPOSITORY, config.ADMIN_USER);

  return {
    services,
    scopeOf: async (userName, roles = ['USER'], repositoryName = config.DEFAULT_REPOSITORY) => {
      const em = orm.em.fork() as EntityManager;
      const repository = await services.repositories.find({ em }, repositoryName);
      // the user's groups as stored, as a session reads them
      return { em, services, principal: { userName, roles, groups: await groupsOfUser(em, userName) }, repository, logger: logger.child({ user: userName }) };
    },
    stage: async (scope, text = 'some bytes', fileName = 'file.txt') =>
      (await stageUpload(scope, { source: Readable.from([Buffer.from(text)]), fileName })).id,
    addUsers: async (users, groups = {}) => {
      const em = () => orm.em.fork() as EntityManager;
      for (const user of users) await em().execute(`insert into app_user (user_name, password_hash, roles) values (?, 'unused', '{USER}')`, [user]);
      for (const [name, members] of Object.entries(groups)) {
        await createGroup(em(), administrator, { name });
        for (const member of members) await addMember(em(), services, administrator, { name, userName: member });
      }
    },
    stop: async () => {
      await services.jobs.stop();
      await services.auth.close();
      await services.snapshotReaders.close();
      await orm.close(true);
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** What an operation failed with (its reason code and message), or undefined when it succeeded: for one-line assertions. */
export const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { reasonCode?: string; message: string }) => ({ reasonCode: error.reasonCode, message: error.message }),
  );

/** The actor of administration operations called directly (the events they write name it). */
export const administrator: Principal = { userName: 'admin', roles: ['ADMIN'], groups: [] };
