import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedJob } from '../../../test/helpers/conversion.js';
import { sql } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { executeBounded } from '../../db/statement-timeout.js';
import { JobQueue } from './queue.js';

let service: TestService;
let queue: JobQueue;
const timeoutMs = 300;
/** Minutes of one Postgres core (64 KB of it took 11–17 s): the text search parser is quadratic on 256 KB of `<!--`. */
const slowStatement = `select length(to_tsvector('simple', repeat('<!--', 65536))::text) as n`;

beforeAll(async () => {
  service = await startTestService();
  queue = new JobQueue({ ...service.config, WORKER_NAME: 'statement-timeout', JOB_CONCURRENCY: 1, JOB_STATEMENT_TIMEOUT_MS: timeoutMs }, service.services.orm, service.services.logger, service.config.DATABASE_URL!);
  // in a transaction of the job's unit of work, in one on a fork (as the domain operations a job calls open them:
  // inTransaction), and a lone statement sent bounded (as the texts of an extraction are stored)
  queue.define('slow-transaction', async ({ em }) => ({ result: { rows: await em.transactional((tx) => tx.execute(slowStatement)) } }));
  queue.define('slow-forked-transaction', async ({ em }) => ({ result: { rows: await em.fork().transactional((tx) => tx.execute(slowStatement)) } }));
  queue.define('slow-bounded-statement', async ({ em }) => ({ result: { rows: await executeBounded(em, slowStatement, []) } }));
  queue.define('quick-statement', async ({ em }) => ({ result: { rows: await em.transactional((tx) => tx.execute(`show statement_timeout`)) } }));
  await queue.start();
});
afterAll(async () => {
  await queue?.stop();
  await service?.stop();
});

const submit = (jobName: string) =>
  queue.submit(service.services.orm.em.fork() as EntityManager, {
    repositoryId: 'svc.repository.default',
    jobName,
    conversionType: 'TEST',
    clientUsername: 'admin',
    clientRoles: ['ADMIN'],
    contentIds: [],
    inputFilenames: [],
    partition: 'access.svc.content.default',
    serializedRequest: {},
  });

describe('JOB_STATEMENT_TIMEOUT_MS', () => {
  it('a job statement over it is cancelled and fails its job with a clear reason: in a transaction of the job, or sent bounded', { timeout: 90_000 }, async () => {
    for (const jobName of ['slow-transaction', 'slow-forked-transaction', 'slow-bounded-statement']) {
      const started = performance.now();
      const job = (await finishedJob(service, (await submit(jobName)).id)).serviceRequestJob;
      expect(job, jobName).toMatchObject({
        state: 'panic',
        reasonCode: 'statementTimeout',
        errorMessage: `a database statement of the job ran longer than JOB_STATEMENT_TIMEOUT_MS (${timeoutMs} ms) and was cancelled`,
      });
      // the statement alone would hold a Postgres core for minutes
      expect(performance.now() - started, jobName).toBeLessThan(10_000);
      // and Postgres runs it no more
      expect(await sql(service, `select pid from pg_stat_activity where query like '%repeat(''<!--''%' and pid <> pg_backend_pid()`)).toEqual([]);
    }
  });

  it('leaves statements within it alone, and bounds the transactions of jobs only', async () => {
    const job = (await finishedJob(service, (await submit('quick-statement')).id)).serviceRequestJob;
    expect(job).toMatchObject({ state: 'Done', serializedResult: JSON.stringify({ rows: [{ statement_timeout: `${timeoutMs}ms` }] }) });
    // a request's transaction, outside any job
    expect(await service.services.orm.em.fork().transactional((tx) => tx.execute(`show statement_timeout`))).toEqual([{ statement_timeout: '0' }]);
  });
});
