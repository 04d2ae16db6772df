import http from 'node:http';
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

describe('a stop with a request still unanswered after the drain', () => {
  it('answers it 503 unavailable with Retry-After and Connection: close, instead of closing the connection without a word', async () => {
    const service = await startTestService({ SHUTDOWN_DRAIN_MS: '300' });
    const url = new URL(`${service.contentBase}/folder?sessionId=${service.adminSession}`);
    const received = new Promise<void>((resolve) =>
      service.server.on('request', (request: http.IncomingMessage) => {
        if (request.method === 'POST' && request.url?.includes('/folder')) resolve();
      }),
    );
    // a body that announces 1,000 bytes and sends 10: the route waits for the rest (a slow upload)
    const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000' } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      });
      request.on('error', reject);
      request.write('{"name": "');
    });
    // the server has the request before the stop begins (a fixed 200 ms pause was not always enough on a loaded machine)
    await received;
    const started = Date.now();
    await service.stop();
    const { status, headers, body } = await answer;
    expect(status).toBe(503);
    expect(headers['retry-after']).toBe('5');
    expect(headers.connection).toBe('close');
    expect(JSON.parse(body)).toMatchObject({ status: 503, reasonCode: 'unavailable', message: 'the service is stopping: send the request again' });
    // the drain's 300 ms, then the answer's moment to leave: not the default 10 s
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
