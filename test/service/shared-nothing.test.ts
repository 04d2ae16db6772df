/**
 * Shared nothing (DESIGN §14, issue 25): two gateways, two content subgraphs, two admin subgraphs, a health
 * subgraph and two job workers, each a process (ROLE=…) with a data folder of its own, sharing nothing but
 * the test database and one S3 peer (content and cache buckets). Gateway A reaches content 1 and admin 1,
 * gateway B content 2 and admin 2 (SUBGRAPH_*_URL). What one gateway did, the other sees; jobs go to
 * either worker; sessions and login limits hold across gateways; no data folder receives a byte.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';
import { convert, finishedJob, jobStatus } from '../helpers/conversion.js';
import { contentUrl, newContent, newFolder } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { adminPassword, call, createTestDatabase, openSubscription, type TestService } from '../helpers/service.js';

let s3: TestS3;
const processes = new Map<string, ServiceProcess>();
const dataDirs: string[] = [];
let shared: Record<string, string>;
let gatewayA: TestService;
let gatewayB: TestService;

async function startRole(name: string, role: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `crs-shared-nothing-${name}-`));
  dataDirs.push(dataDir);
  const started = await startServiceProcess({ ...shared, ROLE: role, DATA_DIR: dataDir, PORT: String(await freePort()), ...env }, { timeoutMs: 90_000 });
  processes.set(name, started);
  return started;
}

const graphqlUrl = (name: string) => `${processes.get(name)!.baseUrl}/graphql`;

const authenticate = (gateway: Pick<TestService, 'baseUrl'>, user: string, password: string) =>
  fetch(`${gateway.baseUrl}/api/v1/authenticate?user=${encodeURIComponent(user)}&password=${encodeURIComponent(password)}`, { method: 'POST' });

/** What the test helpers used here read of a service (its URLs and an administrator's session), for a gateway process. */
async function gatewayOf(gateway: ServiceProcess): Promise<TestService> {
  const base = gateway.baseUrl;
  const login = async (user: string, password: string) => {
    const response = await authenticate({ baseUrl: base }, user, password);
    if (response.status !== 200) throw new Error(`login of ${user} failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as string;
  };
  return {
    baseUrl: base,
    adminSession: await login('admin', adminPassword),
    contentBase: `${base}/api/v1/access.svc.content.default/v1`,
    adminBase: `${base}/api/v1/access.svc.admin/v1`,
    login,
  } as TestService;
}

beforeAll(async () => {
  s3 = await startTestS3();
  shared = {
    ...s3.env,
    DATABASE_URL: await createTestDatabase(),
    ADMIN_PASSWORD: adminPassword,
    LOG_LEVEL: 'warn',
    OCR_ENABLED: 'false',
    JOB_LOCK_LIFETIME_MS: '3000',
    JOB_POLL_MS: '300',
    CONV_PDF_DPI: '100',
  };
  // the first process sets the database up (default repository, administrator); the others find it done
  await startRole('health', 'health');
  await Promise.all([
    startRole('content-1', 'content'),
    startRole('content-2', 'content'),
    startRole('admin-1', 'admin'),
    startRole('admin-2', 'admin'),
    startRole('worker-1', 'worker', { WORKER_NAME: 'worker-1', JOB_CONCURRENCY: '1' }),
    startRole('worker-2', 'worker', { WORKER_NAME: 'worker-2', JOB_CONCURRENCY: '1' }),
  ]);
  const subgraphsOf = (n: number) => ({
    SUBGRAPH_CONTENT_URL: graphqlUrl(`content-${n}`),
    SUBGRAPH_ADMIN_URL: graphqlUrl(`admin-${n}`),
    SUBGRAPH_HEALTH_URL: graphqlUrl('health'),
  });
  const [a, b] = await Promise.all([startRole('gateway-a', 'gateway', subgraphsOf(1)), startRole('gateway-b', 'gateway', subgraphsOf(2))]);
  [gatewayA, gatewayB] = await Promise.all([gatewayOf(a), gatewayOf(b)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([...processes.values()].map((started) => started.stop()));
  await s3?.stop();
  await Promise.all(dataDirs.map((dir) => fs.rm(dir, { recursive: true, force: true, maxRetries: 5 })));
});

describe('shared nothing: processes share only the database and the bucket', () => {
  it('an upload through gateway A is downloadable, found by property and by text, and convertible through gateway B', async () => {
    const folder = await newFolder(gatewayA, 'shared-nothing');
    const content = await newContent(gatewayA, { name: 'notes.txt', parentId: folder.id, bytes: 'quokkas wander past the lighthouse', properties: { color: 'teal' } });
    expect(await s3.keys(s3.bucket)).toContain(content.resource.resourceSource.path);

    const download = await fetch(contentUrl(gatewayB, `/content/${content.id}/download`));
    expect(await download.text()).toBe('quokkas wander past the lighthouse');
    const byProperty = await call(contentUrl(gatewayB, '/content/search/by-condition', { condition: "properties.color = 'teal'" }));
    expect(byProperty.body.entries.map((entry: { id: string }) => entry.id)).toEqual([content.id]);
    // the text is extracted by a worker after the upload
    await expect
      .poll(async () => (await call(contentUrl(gatewayB, '/content/search/by-text', { searchText: 'quokkas' }))).body.entries?.map((entry: { id: string }) => entry.id), {
        timeout: 30_000,
        interval: 200,
      })
      .toEqual([content.id]);

    const pdf = await newContent(gatewayA, { name: 'two-pages.pdf', parentId: folder.id, bytes: textPdf(2) });
    const started = await convert(gatewayB, { contentId: pdf.id });
    expect(started.status).toBe(200);
    const job = await finishedJob(gatewayB, started.body.jobId, {}, 60_000);
    expect(job.state, JSON.stringify(job)).toBe('Done');
    expect(['worker-1', 'worker-2']).toContain(job.serviceRequestJob.workerName);
    const representations = await call(contentUrl(gatewayA, `/content/${pdf.id}/representations`));
    // the two page images (and, once its job has run, the upload's preview: format thumbnail)
    const pages = representations.body.entries.filter((representation: { format: string }) => representation.format === 'png');
    expect(pages).toHaveLength(2);
    const page = await fetch(contentUrl(gatewayA, `/representations/${pages[0].id}/download`));
    expect(Buffer.from(await page.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    expect((await s3.keys(s3.cacheBucket)).filter((key) => !key.startsWith('.tmp/')).length).toBeGreaterThanOrEqual(2);
  });

  it('a worker killed (SIGKILL) in the middle of a conversion: the other worker finishes it — both took the job', async () => {
    const folder = await newFolder(gatewayA, 'killed');
    const content = await newContent(gatewayA, { name: 'long.pdf', bytes: textPdf(24) });
    const jobId = (await convert(gatewayA, { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'page', parentId: folder.id } })).body.jobId;
    const until = Date.now() + 60_000;
    let running: Record<string, any>;
    for (;;) {
      running = (await jobStatus(gatewayB, jobId)).body.serviceRequestJob;
      if (running.state === 'running' && running.percentage >= 30) break;
      expect(running.state).not.toBe('Done');
      expect(Date.now()).toBeLessThan(until);
      await sleep(50);
    }
    const victim = processes.get(running.workerName)!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    const done = await finishedJob(gatewayB, jobId, {}, 90_000);
    expect(done.state).toBe('Done');
    expect(done.serviceRequestJob.tries).toBe(2);
    expect(['worker-1', 'worker-2']).toContain(done.serviceRequestJob.workerName);
    expect(done.serviceRequestJob.workerName).not.toBe(running.workerName);
    const children = await call(contentUrl(gatewayB, `/folder/${folder.id}/children`, { limit: 100 }));
    expect(children.body.count).toBe(24);
  }, 150_000);

  it('counts failed logins across both gateways (one user: five attempts a minute)', async () => {
    const statuses: number[] = [];
    // one after the other, alternating gateways: each refusal is counted in the one database
    for (let i = 0; i < 5; i++) statuses.push((await authenticate(i % 2 === 0 ? gatewayA : gatewayB, 'admin', `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    // the right password is now refused through either gateway
    expect((await authenticate(gatewayB, 'admin', adminPassword)).status).toBe(429);
    expect((await authenticate(gatewayA, 'admin', adminPassword)).status).toBe(429);
  }, 60_000);

  it('a logout through gateway A ends the session at gateway B, an open subscription included', async () => {
    const session = gatewayB.adminSession;
    expect((await call(`${gatewayB.contentBase}/home?sessionId=${session}`)).status).toBe(200);
    const subscription = await openSubscription(gatewayB, 'subscription { healthChanges(intervalMs: 1000) { status } }', { session });
    try {
      await subscription.until(1, 20_000);
      expect(subscription.outcome()).toEqual({});
      expect((await call(`${gatewayA.baseUrl}/api/v1/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })).status).toBe(204);
      const outcome = await Promise.race([subscription.ended, sleep(10_000).then(() => ({ error: 'still open 10 s after the logout' }))]);
      expect(outcome.error).toMatchObject({ code: 4401 });
    } finally {
      await subscription.close();
    }
    expect((await call(`${gatewayB.contentBase}/home?sessionId=${session}`)).status).toBe(401);
  });

  it('no data folder of any process holds a byte of content or cache', async () => {
    const found: string[] = [];
    for (const dir of dataDirs) {
      for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) found.push(path.join(entry.parentPath, entry.name));
      }
    }
    expect(found).toEqual([]);
  });
});
