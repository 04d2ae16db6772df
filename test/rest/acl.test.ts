import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder } from '../helpers/entries.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { adminPassword, call, json, startTestService, type TestService } from '../helpers/service.js';
import { freePort } from '../../src/net.js';

/*
 * Access control over the public surfaces (DESIGN §10): REST exactly as DESIGN writes the paths, and
 * GraphQL through the gateway. The rules themselves are tested on the verbs (src/modules/access/acl.test.ts).
 */

let service: TestService;
let reader: string;
let outsider: string;
let folderId: string;
let contentId: string;
const repositoryId = 'svc.repository.default';

const adminUrl = (route: string, query: Record<string, string> = {}, session = service.adminSession) =>
  `${service.adminBase}${route}?${new URLSearchParams({ ...query, sessionId: session })}`;

beforeAll(async () => {
  service = await startTestService();
  reader = await service.createUserSession('reader');
  outsider = await service.createUserSession('outsider');
  const narrowed = await call(adminUrl('/repository/acl', { repositoryId }), json('PUT', { entries: [] }));
  expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
  folderId = (await newFolder(service, 'team')).id;
  const granted = await call(contentUrl(service, `/folder/${folderId}/acl`), json('PUT', { entries: [{ principal: 'reader', permission: 'read' }] }));
  expect(granted.status, JSON.stringify(granted.body)).toBe(200);
  contentId = (await newContent(service, { name: 'plan.txt', parentId: folderId, bytes: 'the plan' })).id;
});
afterAll(() => service?.stop());

describe('REST', () => {
  it('404 for what the caller may not read, 403 accessDenied for what it may read but not change', async () => {
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, outsider))).status).toBe(404);
    expect((await call(contentUrl(service, `/folder/${folderId}/children`, {}, outsider))).status).toBe(404);
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, reader))).status).toBe(200);
    const download = await fetch(contentUrl(service, `/content/${contentId}/download`, {}, reader));
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('the plan');
    expect((await fetch(contentUrl(service, `/content/${contentId}/download`, {}, outsider))).status).toBe(404);
    const patched = await call(contentUrl(service, `/content/${contentId}`, {}, reader), json('PATCH', { name: 'mine.txt' }));
    expect(patched.status).toBe(403);
    expect(patched.body.reasonCode).toBe('accessDenied');
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, reader), { method: 'DELETE' })).status).toBe(403);
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, outsider), { method: 'DELETE' })).status).toBe(404);
  });

  it('the ACL and permissions in DESIGN §10\'s shapes', async () => {
    const acl = await call(contentUrl(service, `/content/${contentId}/acl`, {}, reader));
    expect(acl.status).toBe(200);
    expect(acl.body).toEqual({
      _type: 'svc.model.content.Acl',
      inherit: true,
      entries: [],
      effective: [{ principal: 'reader', permission: 'read', inheritedFrom: folderId }],
    });
    const permissions = await call(contentUrl(service, `/content/${contentId}/permissions`, {}, reader));
    expect(permissions.body).toEqual({ permission: 'read', actions: ['read', 'download', 'copy'] });
    expect((await call(contentUrl(service, `/folder/${folderId}/permissions`))).body).toEqual({
      permission: 'all',
      actions: ['read', 'update', 'fileInto', 'delete', 'changeAcl'],
    });
    // a content's id on the folder path is not a folder
    expect((await call(contentUrl(service, `/folder/${contentId}/acl`))).status).toBe(404);
    const root = await call(adminUrl('/repository/acl', { repositoryId }));
    expect(root.body).toEqual({ _type: 'svc.model.content.Acl', entries: [] });
    expect((await call(adminUrl('/repository/acl', { repositoryId }, reader))).status).toBe(403);
  });

  it('a malformed ACL body is a 400 naming what is wrong; changing an ACL needs all (403)', async () => {
    const put = (body: unknown, session = service.adminSession) => call(contentUrl(service, `/content/${contentId}/acl`, {}, session), json('PUT', body));
    const cases: [unknown, RegExp][] = [
      [{ entries: [{ principal: 'reader', permission: 'owner' }] }, /permission/],
      [{ entries: [{ principal: 'nobody-here', permission: 'read' }] }, /no user 'nobody-here'/],
      [{ entries: [{ principal: 'reader' }] }, /permission/],
      [{ inherit: 'yes', entries: [] }, /inherit/],
      [{}, /entries/],
      [[], /object/],
    ];
    for (const [body, message] of cases) {
      const answer = await put(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.message).toMatch(message);
    }
    const notJson = await call(contentUrl(service, `/content/${contentId}/acl`), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
    expect((await put({ entries: [] }, reader)).status).toBe(403);
    expect((await put({ entries: [] }, outsider)).status).toBe(404);
  });

  it('an ACL of more than 200 entries, a root ACL with inherit, and an unknown or malformed repository are refused', async () => {
    const many = Array.from({ length: 201 }, () => ({ principal: 'reader', permission: 'read' }));
    const tooMany = await call(contentUrl(service, `/content/${contentId}/acl`), json('PUT', { entries: many }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toMatch(/entries/);
    const inherit = await call(adminUrl('/repository/acl', { repositoryId }), json('PUT', { inherit: false, entries: [] }));
    expect(inherit.status).toBe(400);
    expect(inherit.body.message).toMatch(/inherit/);
    expect((await call(adminUrl('/repository/acl', { repositoryId: 'svc.repository.nowhere' }))).status).toBe(404);
    expect((await call(adminUrl('/repository/acl', { repositoryId: 'nowhere' }), json('PUT', { entries: [] }))).status).toBe(400);
    expect((await call(adminUrl('/repository/acl'))).status).toBe(400);
    // nothing of it was kept
    expect((await call(adminUrl('/repository/acl', { repositoryId }))).body.entries).toEqual([]);
  });

  it('searches and their counts answer only what the caller may read', async () => {
    const count = async (session: string, path: string, query: Record<string, string>) => (await call(contentUrl(service, path, query, session))).body.count;
    for (const session of [service.adminSession, reader, outsider]) {
      const expected = session === outsider ? 0 : 1;
      expect(await count(session, '/content/search', { name: 'plan.txt' })).toBe(expected);
      expect(await count(session, '/content/search/by-condition', { condition: "name = 'plan.txt'" })).toBe(expected);
      expect(await count(session, '/content/search/by-text', { searchText: 'plan' })).toBe(expected);
    }
    expect(await count(outsider, '/home', {})).toBe(0);
    expect(await count(reader, '/home', {})).toBe(1);
  });

  it('inherit: false stops what the folder hands down', async () => {
    const put = await call(contentUrl(service, `/content/${contentId}/acl`), json('PUT', { inherit: false, entries: [{ principal: 'outsider', permission: 'write' }] }));
    expect(put.status).toBe(200);
    expect(put.body.effective).toEqual([{ principal: 'outsider', permission: 'write' }]);
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, reader))).status).toBe(404);
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, outsider), json('PATCH', { properties: { checked: true } }))).status).toBe(200);
    await call(contentUrl(service, `/content/${contentId}/acl`), json('PUT', { inherit: true, entries: [] }));
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, reader))).status).toBe(200);
    expect((await call(contentUrl(service, `/content/${contentId}`, {}, outsider))).status).toBe(404);
  });
});

describe('groups', () => {
  it('a group in an ACL: joining it grants at once, leaving it takes away, deleting the group removes its entries', async () => {
    const admin = (method: string, route: string, query: Record<string, string>, body?: unknown) =>
      call(adminUrl(route, query), body === undefined ? { method } : json(method, body));
    expect((await admin('POST', '/group', {}, { name: 'auditors' })).status).toBe(201);
    const folder = (await newFolder(service, 'audit')).id;
    const put = await call(contentUrl(service, `/folder/${folder}/acl`), json('PUT', { entries: [{ principal: 'group:Auditors', permission: 'read' }] }));
    expect(put.body.entries).toEqual([{ principal: 'group:auditors', permission: 'read' }]);
    const get = async () => (await call(contentUrl(service, `/folder/${folder}`, {}, outsider))).status;
    expect(await get()).toBe(404);
    expect((await admin('POST', '/group/members', { name: 'auditors', userName: 'outsider' })).status).toBeLessThan(300);
    expect(await get()).toBe(200);
    expect((await call(contentUrl(service, '/content/search/by-condition', { condition: "name = 'audit'" }, outsider))).body.count).toBe(1);
    expect((await admin('DELETE', '/group/members', { name: 'auditors', userName: 'outsider' })).status).toBeLessThan(300);
    expect(await get()).toBe(404);
    expect((await admin('DELETE', '/group', { name: 'auditors' })).status).toBe(204);
    expect((await call(contentUrl(service, `/folder/${folder}/acl`))).body.entries).toEqual([]);
    const unknown = await call(contentUrl(service, `/folder/${folder}/acl`), json('PUT', { entries: [{ principal: 'group:auditors', permission: 'read' }] }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/no group 'auditors'/);
  });
});

describe('GraphQL through the gateway', () => {
  it('acl, myPermission and setAcl; an entry the caller may not read is a NOT_FOUND error', async () => {
    const read = await service.graphql<{ content: { myPermission: string; acl: { effective: { principal: string }[] } } }>(
      'query($id: ID!) { content(repository: "default", id: $id) { myPermission acl { inherit effective { principal permission inheritedFrom } } } }',
      { id: contentId },
      reader,
    );
    expect(read.errors).toBeUndefined();
    expect(read.data?.content).toEqual({ myPermission: 'read', acl: { inherit: true, effective: [{ principal: 'reader', permission: 'read', inheritedFrom: folderId }] } });
    const hidden = await service.graphql('query($id: ID!) { content(repository: "default", id: $id) { id } }', { id: contentId }, outsider);
    expect(hidden.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound' });
    const denied = await service.graphql('mutation($id: ID!) { setAcl(repository: "default", id: $id, input: { entries: [] }) { inherit } }', { id: contentId }, reader);
    expect(denied.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'accessDenied' });
    const set = await service.graphql<{ setAcl: { entries: unknown[] } }>(
      'mutation($id: ID!) { setAcl(repository: "default", id: $id, input: { entries: [{ principal: "outsider", permission: read }] }) { entries { principal permission } } }',
      { id: contentId },
    );
    expect(set.data?.setAcl.entries).toEqual([{ principal: 'outsider', permission: 'read' }]);
    const searched = await service.graphql<{ searchByCondition: { count: number } }>(
      `query { searchByCondition(repository: "default", condition: "name = 'plan.txt'") { count } }`,
      {},
      outsider,
    );
    expect(searched.data?.searchByCondition.count).toBe(1);
    await service.graphql('mutation($id: ID!) { setAcl(repository: "default", id: $id, input: { entries: [] }) { inherit } }', { id: contentId });
  });
});

describe('two processes', () => {
  let other: ServiceProcess;
  let otherDataDir: string;
  beforeAll(async () => {
    otherDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-acl-b-'));
    other = await startServiceProcess({
      PORT: String(await freePort()),
      DATABASE_URL: service.config.DATABASE_URL!,
      DATA_DIR: otherDataDir,
      ADMIN_PASSWORD: adminPassword,
      LOG_LEVEL: 'warn',
    });
  }, 120_000);
  afterAll(async () => {
    await other?.stop();
    if (otherDataDir) await fs.rm(otherDataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('an ACL or root ACL changed in one process holds at once in the other', async () => {
    const otherBase = `${other.baseUrl}/api/v1/access.svc.content.default/v1`;
    const get = (session: string) => call(contentUrl(service, `/content/${contentId}`, {}, session, otherBase));
    expect((await get(reader)).status).toBe(200);
    await call(contentUrl(service, `/folder/${folderId}/acl`), json('PUT', { entries: [] }));
    expect((await get(reader)).status).toBe(404);
    // the root's ACL is the repository's (each process caches repositories): EVERYONE all again
    await call(adminUrl('/repository/acl', { repositoryId }), json('PUT', { entries: [{ principal: 'EVERYONE', permission: 'all' }] }));
    const deadline = Date.now() + 2_000;
    let status = (await get(reader)).status;
    while (status !== 200 && Date.now() < deadline) status = (await get(reader)).status;
    expect(status).toBe(200);
  });
});
