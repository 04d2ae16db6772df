import path from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { createOrm, migrate, type Orm, type OrmOptions } from './orm.js';

export interface Database {
  orm: Orm;
  /** the server's postgres:// URL (for connections of their own, e.g. LISTEN) */
  url: string;
  close(): Promise<void>;
}

/** `DATABASE_URL` → that server; otherwise a real Postgres from the embedded binaries in $DATA_DIR/pg. */
export async function openDatabase(config: Config, logger: Logger, entities: OrmOptions['entities']): Promise<Database> {
  const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres({
        directory: path.join(config.dataDir, 'pg'),
        logger,
        reservedPorts: [config.PORT],
      });
  const url = config.DATABASE_URL ?? embedded!.url;
  try {
    const orm = await createOrm(url, logger, { entities });
    await migrateExclusively(orm);
    return {
      orm,
      url,
      close: async () => {
        await orm.close(true);
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}

/** Several processes may start at once against one database: one migrates, the others wait for it. */
async function migrateExclusively(orm: Orm): Promise<void> {
  const em = orm.em.fork();
  await em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(7340031)');
    await migrate(orm);
  });
}
