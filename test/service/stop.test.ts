import { describe, expect, it } from 'vitest';
import { call, startTestService } from '../helpers/service.js';

describe('stopping the service', () => {
  it('goes on past a step that fails, closes the database all the same, and says which step failed', async () => {
    const lines: string[] = [];
    const { pino } = await import('pino');
    const service = await startTestService({}, { logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }) });
    expect((await call(`${service.baseUrl}/readyz`)).status).toBe(200);
    // a pool ended twice throws: the 'snapshot readers' step fails
    await service.services.snapshotReaders.close();
    await expect(service.stop()).rejects.toThrow('the service stopped with 1 failed step(s)');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toContainEqual(expect.objectContaining({ step: 'snapshot readers', msg: 'stopping the service: this step failed' }));
    // the steps after it ran: the database is closed
    expect(await service.services.orm.isConnected()).toBe(false);
  });
});
