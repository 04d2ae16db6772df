import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, newFolder } from '../helpers/entries.js';
import { call, startTestService, subscriptionEvents, type TestService } from '../helpers/service.js';

/** `{base_url}` with a service root path: every path moves under BASE_PATH, nothing stays outside. */
describe('BASE_PATH', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ BASE_PATH: '/content-repo' });
  });
  afterAll(() => service?.stop());

  it('serves REST, bytes, GraphQL and operations under the root path', async () => {
    expect(service.baseUrl).toMatch(/\/content-repo$/);
    expect((await call(`${service.baseUrl}/healthz`)).status).toBe(200);
    const folder = await newFolder(service, 'rooted');
    const content = await newContent(service, { name: 'r.txt', parentId: folder.id, bytes: 'rooted bytes' });
    expect(content.resource.downloadUrl).toBe(`/content-repo/api/v1/access.svc.content.default/v1/content/${content.id}/download`);
    const origin = new URL(service.baseUrl).origin;
    const download = await fetch(`${origin}${content.resource.downloadUrl}?sessionId=${service.adminSession}`);
    expect(await download.text()).toBe('rooted bytes');
    expect((await service.graphql('{ me { userName } }')).data).toEqual({ me: { userName: 'admin' } });

    const { events } = await subscriptionEvents<{ healthChanges: { status: string } }>(service, 'subscription { healthChanges(intervalMs: 1000) { status } }', 1);
    expect(events.map((event) => event.data?.healthChanges.status)).toEqual(['ok']);
  });

  it("names the deep check's report under the root path, and serves it there", { timeout: 120_000 }, async () => {
    const { status, body } = await call(`${service.adminBase}/repository/deep-check/by-name?repositoryName=default&sessionId=${service.adminSession}`);
    expect(status).toBe(200);
    expect(body.checkStatus, body.message).toBe('ok');
    expect(body.reportUrl).toBe(`/content-repo/api/v1/access.svc.admin/v1/repository/deep-check/report/${body._id}`);
    const page = await fetch(`${new URL(service.baseUrl).origin}${body.reportUrl}?sessionId=${service.adminSession}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('answers nothing outside the root path', async () => {
    const origin = new URL(service.baseUrl).origin;
    expect(await call(`${origin}/healthz`)).toMatchObject({ status: 404, body: { reasonCode: 'notFound' } });
    expect((await call(`${origin}/api/v1/access.svc.content.default/v1/home?sessionId=${service.adminSession}`)).status).toBe(404);
    expect((await call(`${origin}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).status).toBe(404);
  });
});
