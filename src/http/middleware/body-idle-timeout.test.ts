import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBodyIdleTimeout } from './body-idle-timeout.js';

let server: http.Server;
let port: number;
beforeAll(async () => {
  const app = new Koa();
  app.use(useBodyIdleTimeout(300));
  app.use(async (ctx) => {
    let size = 0;
    for await (const chunk of ctx.req) size += (chunk as Buffer).length;
    // work after the body (a long search): not timed by the body's pause
    await new Promise((resolve) => setTimeout(resolve, 700));
    ctx.body = { size };
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A POST declaring `declared` bytes that sends `sent` of them and then waits; resolves with the answer or the time the connection closed. */
function post(declared: number, sent: number): Promise<{ status?: number; closedAfterMs?: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const request = http.request({ port, method: 'POST', headers: { 'content-length': String(declared) } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode }));
    });
    request.on('error', () => resolve({ closedAfterMs: Date.now() - started }));
    request.write(Buffer.alloc(sent, 1));
    if (sent === declared) request.end();
  });
}

describe('a request body that stops arriving', () => {
  it('has its connection closed after the idle time; a whole body is answered however long the work after it takes', async () => {
    const stalled = await post(1000, 10);
    expect(stalled.closedAfterMs).toBeGreaterThanOrEqual(250);
    expect(stalled.closedAfterMs).toBeLessThan(3000);
    expect(await post(1000, 1000)).toEqual({ status: 200 });
  });
});
