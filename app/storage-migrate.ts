/**
 * `npm run storage:migrate -- --to s3|fs [--switch]`: copies the stored bytes to the other backend
 * (src/storage/migrate.ts; docs/deployment.md "Moving the bytes to S3"). Configured by the service's
 * environment (DATABASE_URL, the storage paths, S3_*). Exit status 0 when done, 1 on a failure (run it
 * again: it goes on where it stopped), 2 on bad arguments or configuration.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { createLogger } from '../src/logger.js';
import { migrateStorage, type Backend } from '../src/storage/migrate.js';
import { closeStores, storesOf, type Stores } from '../src/storage/stores.js';

const usage = 'usage: npm run storage:migrate -- --to s3|fs [--switch]';

async function main(): Promise<number> {
  let target: Backend;
  let switchOver: boolean;
  let config;
  try {
    const { values } = parseArgs({ options: { to: { type: 'string' }, switch: { type: 'boolean', default: false } }, strict: true });
    if (values.to !== 's3' && values.to !== 'fs') throw new ConfigError(`--to must be s3 or fs\n${usage}`);
    target = values.to;
    switchOver = values.switch ?? false;
    config = loadConfig();
    if (!config.s3) throw new ConfigError('storage:migrate needs the S3 settings (S3_BUCKET, S3_CACHE_BUCKET, …) for either direction');
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const logger = createLogger(config.LOG_LEVEL);
  const from: Stores = storesOf(config, target === 's3' ? 'fs' : 's3');
  const to: Stores = storesOf(config, target);
  try {
    await Promise.all([from.contentStore, from.cacheStore, to.contentStore, to.cacheStore].map((store) => store.init()));
    const database = await openDatabase(config, logger, []);
    try {
      const report = await migrateStorage(database.orm.em.fork() as EntityManager, from, to, target, { switchOver, logger });
      logger.info(report, 'storage migration: done');
      process.stdout.write(`${JSON.stringify(report)}\n`);
      if (report.missing.length > 0) {
        process.stderr.write(`${report.missing.length} stored file(s) are in neither store; the switch was not recorded:\n  ${report.missing.join('\n  ')}\n`);
        return 1;
      }
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await Promise.all([closeStores(from), closeStores(to)]);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`storage migration failed (run it again to go on): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
