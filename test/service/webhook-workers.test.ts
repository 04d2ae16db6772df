import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitEvents } from '../helpers/events.js';
import { startWorkerProcesses, type ServiceProcess } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { sql } from '../helpers/entries.js';
import { adminUrl, call, json, startTestService, type TestService } from '../helpers/service.js';

// Deliveries are made by worker processes (ROLE=worker); the REST layer runs here and takes no jobs.
// A worker killed with SIGKILL in the middle of a delivery: the delivery is made again once its lease
// (2 × WEBHOOK_TIMEOUT_MS + 1 s) runs out, by the worker started after it.
const workerEnv = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '100', LOG_LEVEL: 'warn' };
let service: TestService;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  service = await startTestService({ JOB_CONCURRENCY: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await service?.stop();
});

describe('webhook deliveries across a worker crash', () => {
  it('redoes a delivery in flight when its worker was killed (SIGKILL), after a restart', async () => {
    let first = true;
    const receiver = await startReceiver(() => {
      if (!first) return { status: 200 };
      first = false;
      return 'hang';
    });
    try {
      const registered = await call(adminUrl(service, '/webhook'), json('POST', { url: receiver.url, events: ['ENTRY_LOCKED'], secret: 'sixteen-characters' }));
      expect(registered.status).toBe(201);
      const [victim] = (await startWorkerProcesses(service, ['webhook-worker-a'], workerEnv)).values();
      workers.push(victim!);
      await commitEvents(service, [{ type: 'ENTRY_LOCKED', entryId: 'in-flight' }]);
      await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBe(1);
      victim!.child.kill('SIGKILL');
      expect(await victim!.exited).toBe('SIGKILL');
      const [restarted] = (await startWorkerProcesses(service, ['webhook-worker-b'], workerEnv)).values();
      workers.push(restarted!);
      await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBe(2);
      const [killed, redone] = receiver.received;
      expect(redone!.headers['x-event-id']).toBe(killed!.headers['x-event-id']);
      expect(redone!.rawBody.equals(killed!.rawBody)).toBe(true);
      await expect.poll(async () => (await sql(service, 'select count(*)::int as n from webhook_delivery'))[0], { timeout: 10_000 }).toEqual({ n: 0 });
    } finally {
      await receiver.close();
    }
  }, 180_000); // two worker processes started, and a lease to run out: 52.6 s at load 10
});
