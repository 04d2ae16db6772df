import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/db/orm.js';
import { createLogger } from '../../src/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** connection URL of the test cluster's maintenance database */
    postgresUrl: string;
    /** the migrated database each test file copies */
    templateDatabase: string;
  }
}

export const templateDatabase = 'crs_template';

let cluster: EmbeddedDatabase | undefined;
let directory: string | undefined;

/** One real Postgres for the whole run; the schema is migrated once into a template database. */
export async function setup(project: TestProject): Promise<void> {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-test-pg-'));
  await fs.chmod(directory, 0o755);
  const logger = createLogger('warn');
  cluster = await startEmbeddedPostgres({ directory: path.join(directory, 'pg'), logger, ephemeral: true });
  const maintenance = await createOrm(cluster.url, logger, { poolMax: 2 });
  await maintenance.em.getConnection().execute(`create database ${templateDatabase}`);
  await maintenance.close(true);
  const template = await createOrm(cluster.urlFor(templateDatabase), logger, { poolMax: 2 });
  await migrate(template);
  await template.close(true);
  project.provide('postgresUrl', cluster.url);
  project.provide('templateDatabase', templateDatabase);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
}
