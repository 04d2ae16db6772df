import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, fileForm, newContent, newFolder, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
let archive: string;
beforeAll(async () => {
  // small enough to exceed with a test file, large enough for the others
  service = await startTestService({ MAX_UPLOAD_BYTES: '1000' });
  const created = await service.graphql('mutation { createRepository(input: { name: "archive" }) { id } }');
  expect(created.errors).toBeUndefined();
  archive = `${service.baseUrl}/api/v1/access.svc.content.archive/v1`;
});
afterAll(() => service?.stop());

const file = (bytes: string | Uint8Array) => fileForm(bytes, 'f.txt');

describe('a content of one repository, addressed through another that exists', () => {
  it('is not found, by any verb, and stays as it was', async () => {
    const content = await newContent(service, { name: 'kept-apart.txt', bytes: 'default bytes' });
    const viaArchive = (path: string, init: RequestInit = {}, query: Record<string, string> = {}) =>
      call(contentUrl(service, path, query, service.adminSession, archive), init);
    const answers = {
      get: await viaArchive(`/content/${content.id}`),
      download: await viaArchive(`/content/${content.id}/download`),
      patch: await viaArchive(`/content/${content.id}`, json('PATCH', { name: 'renamed.txt' })),
      lock: await viaArchive(`/content/${content.id}/lock`, { method: 'POST' }),
      checkOut: await viaArchive(`/content/${content.id}/check-out`, { method: 'POST' }),
      tags: await viaArchive(`/content/${content.id}/tags`, { method: 'POST' }, { tags: 'x' }),
      versions: await viaArchive(`/content/${content.id}/versions`),
      replace: await viaArchive(`/content/${content.id}/resource`, { method: 'PUT', body: file('other') }),
      remove: await viaArchive(`/content/${content.id}`, { method: 'DELETE' }),
    };
    for (const [verb, answer] of Object.entries(answers)) {
      expect({ verb, status: answer.status, reasonCode: answer.body?.reasonCode }).toEqual({ verb, status: 404, reasonCode: 'notFound' });
    }
    const unchanged = await call(contentUrl(service, `/content/${content.id}`));
    expect(unchanged.body).toMatchObject({ name: 'kept-apart.txt', version: '1.0', active: true, tags: [] });
    expect(unchanged.body.lockedBy).toBeUndefined();
  });
});

describe('upload names', () => {
  it.each([
    ['an empty name', { name: '' }],
    ["'..'", { name: '..' }],
    ['a control character', { name: 'bell\u0007.txt', fileName: 'clean.txt' }],
  ])('refuses %s with a 400 and keeps no upload', async (_case, options) => {
    const answer = await uploadContent(service, { ...options, bytes: 'x' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringContaining('name') });
    const pending = await service.services.orm.em.getConnection().execute<{ n: string }[]>(`select count(*) as n from resource where state = 'pending'`);
    expect(Number(pending[0]!.n)).toBe(0);
  });

  it('drops the path of a file name used as the default name', async () => {
    const answer = await uploadContent(service, { fileName: '../../etc/passwd-copy.txt', bytes: 'x' });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ name: 'passwd-copy.txt', resource: { name: 'passwd-copy.txt' } });
    expect(answer.body.resource.resourceSource.path).not.toContain('..');
  });
});

describe('new bytes for an existing content', () => {
  it('refuses an oversized file on replace and on check-in, and keeps the version', async () => {
    const content = await newContent(service, { name: 'sized.txt', bytes: 'first' });
    const tooBig = file(new Uint8Array(5000).fill(1));
    expect((await call(contentUrl(service, `/content/${content.id}/resource`), { method: 'PUT', body: tooBig })).body).toMatchObject({ status: 413, reasonCode: 'tooLarge' });

    expect((await call(contentUrl(service, `/content/${content.id}/check-out`), { method: 'POST' })).status).toBe(200);
    expect((await call(contentUrl(service, `/content/${content.id}/check-in`), { method: 'POST', body: file(new Uint8Array(5000).fill(2)) })).body).toMatchObject({ status: 413, reasonCode: 'tooLarge' });
    expect((await call(contentUrl(service, `/content/${content.id}/cancel-check-out`), { method: 'POST' })).status).toBe(204);

    const versions = await call(contentUrl(service, `/content/${content.id}/versions`));
    expect(versions.body.entries.map((e: { version: string }) => e.version)).toEqual(['1.0']);
    const download = await fetch(contentUrl(service, `/content/${content.id}/download`));
    expect(await download.text()).toBe('first');
  });
});

describe('GraphQL operations not covered elsewhere', () => {
  it('authenticate and logout', async () => {
    const login = await service.graphql<{ authenticate: string }>('mutation { authenticate(user: "admin", password: "admin-password-for-tests") }', {}, '');
    const session = login.data!.authenticate;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await service.graphql('{ me { userName } }', {}, session)).data).toEqual({ me: { userName: 'admin' } });
    expect((await service.graphql('mutation { logout }', {}, session)).data).toEqual({ logout: true });
    expect((await service.graphql('{ me { userName } }', {}, session)).errors?.[0]?.extensions).toMatchObject({ status: 401 });
    const wrong = await service.graphql('mutation { authenticate(user: "admin", password: "nope-nope") }', {}, '');
    expect(wrong.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notAuthenticated', status: 401 });
  });

  it('createFolder, entry, folderChildren and repositories', async () => {
    const parent = await newFolder(service, 'gql-parent');
    const created = await service.graphql<{ createFolder: { id: string; name: string; parent: { id: string } } }>(
      'mutation($p: ID) { createFolder(repository: "default", input: { name: "gql-child", parentId: $p }) { id name parent { id } } }',
      { p: parent.id },
    );
    expect(created.data!.createFolder).toMatchObject({ name: 'gql-child', parent: { id: parent.id } });
    const entry = await service.graphql<{ entry: { __typename: string; name: string } }>('query($id: ID!) { entry(repository: "default", id: $id) { __typename name } }', { id: created.data!.createFolder.id });
    expect(entry.data!.entry).toEqual({ __typename: 'Folder', name: 'gql-child' });
    const children = await service.graphql<{ folderChildren: { count: number; entries: { name: string }[] } }>(
      'query($id: ID!) { folderChildren(repository: "default", id: $id) { count entries { name } } }',
      { id: parent.id },
    );
    expect(children.data!.folderChildren).toEqual({ count: 1, entries: [{ name: 'gql-child' }] });
    const repositories = await service.graphql<{ repositories: { id: string; name: string }[] }>('{ repositories { id name } }');
    expect(repositories.data!.repositories).toEqual([
      { id: 'svc.repository.archive', name: 'archive' },
      { id: 'svc.repository.default', name: 'default' },
    ]);
  });
});
