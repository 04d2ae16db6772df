import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestDatabase, startTestService, type TestService } from '../helpers/service.js';

/**
 * The deep check in the production topology: the gateway reaches the health subgraph over HTTP, the
 * health process runs the scenarios and submits their jobs, a worker process runs the conversion and
 * the text extraction; every process on one database and the shared storage folders.
 */
describe('deep check in split mode (ROLE=health beside ROLE=worker)', () => {
  const services: TestService[] = [];
  let gateway: TestService;

  beforeAll(async () => {
    const first = await startTestService({ DATABASE_URL: await createTestDatabase(), ROLE: 'content' }, { authenticate: false });
    services.push(first);
    const shared = {
      DATABASE_URL: first.config.DATABASE_URL!,
      CONTENT_STORAGE_PATH: first.config.contentStoragePath,
      CACHE_STORAGE_PATH: first.config.cacheStoragePath,
    };
    const urls: Record<string, string> = { SUBGRAPH_CONTENT_URL: `${first.baseUrl}/graphql` };
    for (const role of ['admin', 'health', 'worker']) {
      const started = await startTestService({ ...shared, ROLE: role }, { authenticate: false });
      services.push(started);
      if (role !== 'worker') urls[`SUBGRAPH_${role.toUpperCase()}_URL`] = `${started.baseUrl}/graphql`;
    }
    gateway = await startTestService({ ...shared, ROLE: 'gateway', ...urls });
    services.push(gateway);
  }, 120_000);
  afterAll(async () => {
    for (const service of services.reverse()) await service.stop();
  });

  it('runs synchronously and as a job through the gateway: every scenario passes', { timeout: 180_000 }, async () => {
    const sync = await call(`${gateway.adminBase}/repository/deep-check/by-name?repositoryName=default&sessionId=${gateway.adminSession}`);
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    expect(sync.body.checkStatus, sync.body.message).toBe('ok');
    const report = await fetch(`${new URL(gateway.baseUrl).origin}${sync.body.reportUrl}?sessionId=${gateway.adminSession}`);
    expect(report.status).toBe(200);

    const started = await call(`${gateway.adminBase}/repository/async-deep-check/by-id?repositoryId=svc.repository.default&sessionId=${gateway.adminSession}`);
    expect(started.status).toBe(200);
    let job: Record<string, any> = {};
    for (const until = Date.now() + 120_000; Date.now() < until && !['Done', 'panic'].includes(job.state); await new Promise((resolve) => setTimeout(resolve, 200))) {
      job = (await call(`${gateway.adminBase}/jobs/status?jobId=${started.body._id}&sessionId=${gateway.adminSession}`)).body;
    }
    expect(job.state).toBe('Done');
    expect(JSON.parse(job.serviceRequestJob.serializedResult)).toMatchObject({ checkStatus: 'ok' });
    expect(job.serviceRequestJob.workerName).toBe(services[3]!.services.jobs.workerName);
  });
});
