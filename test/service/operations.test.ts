import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe('operations endpoints', () => {
  it('answers liveness and readiness without a session', async () => {
    expect(await call(`${service.baseUrl}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await call(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', database: true, contentStorage: true, cacheStorage: true });
  });

  it('exposes Prometheus metrics with bounded route labels', async () => {
    await call(`${service.contentBase}/home?sessionId=${service.adminSession}`);
    const response = await fetch(`${service.baseUrl}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/http_request_duration_seconds_count\{group="content:home",method="GET",status="200"\} \d+/);
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).not.toContain(service.adminSession);
  });

  it('never makes a label of a path a client made up (one group for every unmatched path)', async () => {
    for (const made of ['made-up-1', 'made-up-2']) {
      await call(`${service.baseUrl}/api/v1/access.svc.admin/v1/${made}`);
      await call(`${service.contentBase}/${made}`);
    }
    const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(text).not.toContain('made-up');
    expect(text).toMatch(/http_request_duration_seconds_count\{group="unmatched",method="GET",status="\d+"\} \d+/);
  });

  it('gives every call a request id, keeping a sane one the client sent', async () => {
    const generated = await fetch(`${service.baseUrl}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await fetch(`${service.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-42' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-42');
    const replaced = await fetch(`${service.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown paths and methods with the error body', async () => {
    expect(await call(`${service.baseUrl}/api/v1/nothing-here`)).toMatchObject({
      status: 404,
      body: { _type: 'svc.model.error.ErrorResponse', status: 404, reasonCode: 'notFound' },
    });
    const wrongMethod = await call(`${service.contentBase}/home?sessionId=${service.adminSession}`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 405, reasonCode: 'illegalArguments', message: 'method not allowed on this path' });
    // RFC 9110: a 405 says which methods the path has
    expect(wrongMethod.headers.get('allow')).toMatch(/GET/);
  });
});
