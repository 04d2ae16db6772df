import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, sql, storedFiles } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

let service: TestService;
/** a second user: holds locks, makes changes under its own name */
let other: string;
beforeAll(async () => {
  service = await startTestService();
  other = await service.createUserSession('maint-other');
});
afterAll(() => service?.stop());

const url = (path: string, query = {}, session = service.adminSession) => contentUrl(service, path, query, session);
const nowhere = (path: string, query = {}) => contentUrl(service, path, query, service.adminSession, `${service.baseUrl}/api/v1/access.svc.content.nowhere/v1`);
const getContent = (id: string) => call(url(`/content/${id}`));
const patch = (id: string, body: unknown, session?: string) => call(url(`/content/${id}`, {}, session), json('PATCH', body));
const rawPatch = (id: string, text: string) => call(url(`/content/${id}`), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: text });
const remove = (id: string, query = {}, session?: string) => call(url(`/content/${id}`, query, session), { method: 'DELETE' });
const restore = (id: string, session?: string) => call(url(`/content/${id}/restore`, {}, session), { method: 'POST' });
const copy = (id: string, body?: unknown, session?: string) =>
  call(url(`/content/${id}/copy`, {}, session), body === undefined ? { method: 'POST' } : json('POST', body));
const tags = (method: 'POST' | 'DELETE', id: string, list?: string[], session?: string) =>
  call(url(`/content/${id}/tags`, list ? { tags: list } : {}, session), { method });
const lockAs = async (session: string, id: string) => {
  const locked = await call(url(`/content/${id}/lock`, {}, session), { method: 'POST' });
  expect(locked.status).toBe(200);
  expect(locked.body.lockedBy).toBe('maint-other');
};
const download = async (id: string, query: Record<string, string> = {}, session?: string) => {
  const response = await fetch(contentUrl(service, `/content/${id}/download`, query, session));
  return { status: response.status, text: await response.text() };
};
const childNames = async (folderId: string) => ((await call(url(`/folder/${folderId}/children`))).body.entries as { name: string }[]).map((e) => e.name);
const homeNames = async () => ((await call(url('/home', { limit: 1000 }))).body.entries as { name: string }[]).map((e) => e.name);
const resourceRows = (ids: string[]) => sql<{ id: string }>(service, 'select id from resource where id = any(array[?]::text[]) order by id', [ids]);

function expectError(response: { status: number; body: any }, status: number, reasonCode: string, words?: string) {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status, reasonCode });
  if (words) expect(response.body.message).toContain(words);
}

/** A second version (1.1) through PUT C/content/{id}/resource; answers [version 1.0, version 1.1]. */
async function withTwoVersions(name: string, parentId?: string) {
  const first = await newContent(service, { name, parentId, bytes: `${name} v1` });
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(`${name} v2`)]), name);
  const second = await call(url(`/content/${first.id}/resource`), { method: 'PUT', body: form });
  expect(second.status).toBe(200);
  expect(second.body.version).toBe('1.1');
  return [first, second.body] as const;
}

describe('PATCH C/content/{id}', () => {
  it('renames, retypes and re-describes the same version; lastModifiedAt/By follow the caller', async () => {
    const content = await newContent(service, { name: 'report.txt', typeName: 'draft', properties: { a: 1, b: 'two', keep: true } });
    await pause();
    const { status, body } = await patch(content.id, { name: 'final report.txt', typeName: 'final', properties: { b: null, c: [3] } }, other);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      _type: 'svc.model.content.Content',
      id: content.id,
      chronicalId: content.id,
      name: 'final report.txt',
      typeName: 'final',
      properties: { a: 1, keep: true, c: [3] },
      version: '1.0',
      versionStatus: 'CURRENT',
      owner: 'admin',
      createdBy: 'admin',
      createdAt: content.createdAt,
      lastModifiedBy: 'maint-other',
    });
    expect(body.properties).not.toHaveProperty('b');
    expect(body.lastModifiedAt > content.lastModifiedAt).toBe(true);
    // the bytes are the same resource
    expect(body.resource).toEqual(content.resource);
    expect((await getContent(content.id)).body).toEqual(body);

    // null clears: the type, and all the properties
    const cleared = await patch(content.id, { typeName: null, properties: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('typeName');
    expect(cleared.body.properties).toEqual({});
    expect(cleared.body.name).toBe('final report.txt');

    // an empty PATCH changes nothing
    const same = await patch(content.id, {});
    expect(same.status).toBe(200);
    expect(same.body.lastModifiedAt).toBe(cleared.body.lastModifiedAt);
  });

  it('moves a content into a folder and back to the root; the whole chronicle moves', async () => {
    const folder = await newFolder(service, 'Move target');
    const [v1, v2] = await withTwoVersions('moving.txt');
    const moved = await patch(v2.id, { parentId: folder.id });
    expect(moved.status).toBe(200);
    expect(moved.body.parent).toMatchObject({ _type: 'svc.model.content.Folder', id: folder.id, name: 'Move target' });
    expect(moved.body.version).toBe('1.1');
    expect(await childNames(folder.id)).toEqual(['moving.txt']);
    expect(await homeNames()).not.toContain('moving.txt');
    const rows = await sql<{ id: string; parent_id: string }>(service, 'select id, parent_id from entry where chronical_id = ? order by version_minor', [v1.id]);
    expect(rows).toEqual([
      { id: v1.id, parent_id: folder.id },
      { id: v2.id, parent_id: folder.id },
    ]);

    const back = await patch(v2.id, { parentId: null });
    expect(back.status).toBe(200);
    expect(back.body).not.toHaveProperty('parent');
    expect(await homeNames()).toContain('moving.txt');
    expect(await childNames(folder.id)).toEqual([]);
    const again = await patch(v2.id, { parentId: folder.id, name: 'moved.txt' });
    expect(again.body).toMatchObject({ name: 'moved.txt', parent: { id: folder.id } });
    expect((await patch(v2.id, { parentId: '' })).body).not.toHaveProperty('parent');
  });

  it('answers 409 for a name taken in the target folder (rename or move) and changes nothing', async () => {
    const folder = await newFolder(service, 'Crowded');
    await newContent(service, { name: 'same.txt', parentId: folder.id });
    await newFolder(service, 'Sub', folder.id);
    const mover = await newContent(service, { name: 'same.txt' });
    expectError(await patch(mover.id, { parentId: folder.id }), 409, 'conflict', "'same.txt'");
    const neighbour = await newContent(service, { name: 'neighbour.txt', parentId: folder.id });
    expectError(await patch(neighbour.id, { name: 'same.txt' }), 409, 'conflict', "'same.txt'");
    // a folder's name counts too
    expectError(await patch(neighbour.id, { name: 'Sub' }), 409, 'conflict');
    expect((await getContent(mover.id)).body).not.toHaveProperty('parent');
    expect((await getContent(neighbour.id)).body.name).toBe('neighbour.txt');
  });

  it('answers 404 for an unknown content, a folder id, an unknown target folder and an unknown repository', async () => {
    const content = await newContent(service, { name: 'stays.txt' });
    expectError(await patch('no-such-content', { name: 'x' }), 404, 'notFound', 'no-such-content');
    const folder = await newFolder(service, 'Not a content');
    expectError(await patch(folder.id, { name: 'x' }), 404, 'notFound');
    expectError(await patch(content.id, { parentId: 'no-such-folder' }), 404, 'notFound', 'no-such-folder');
    // a content is no folder to move into
    const another = await newContent(service, { name: 'not-a-folder.txt' });
    expectError(await patch(content.id, { parentId: another.id }), 404, 'notFound');
    expectError(await call(nowhere(`/content/${content.id}`), json('PATCH', { name: 'x' })), 404, 'notFound', "'nowhere'");
    expect((await getContent(content.id)).body).toMatchObject({ name: 'stays.txt', lastModifiedAt: content.lastModifiedAt });
  });

  it('rejects bad names, wrong types, unknown fields and malformed JSON (400)', async () => {
    const content = await newContent(service, { name: 'strict.txt' });
    for (const [body, words] of [
      [{ name: '' }, 'empty'],
      [{ name: ' ' }, 'empty'],
      [{ name: 'a/b' }, "'/'"],
      [{ name: 'back\\slash' }, "'/'"],
      [{ name: '..' }, "'..'"],
      [{ name: 'line\nbreak' }, 'control'],
      [{ name: 'del\u007f' }, 'control'],
      [{ name: 42 }, 'name'],
      [{ name: null }, 'name'],
      [{ parentId: 3 }, 'parentId'],
      [{ typeName: false }, 'typeName'],
      [{ properties: [1, 2] }, 'properties'],
      [{ properties: 'text' }, 'properties'],
      [{ properties: { 'bad key!': 1 } }, 'bad key!'],
      [{ version: '9.9' }, 'version'],
      [{ name: 'ok.txt', owner: 'mallory' }, 'owner'],
    ] as const) {
      const response = await patch(content.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.reasonCode).toBe('illegalArguments');
      expect(response.body.message, JSON.stringify(body)).toContain(words);
    }
    expectError(await rawPatch(content.id, '{"name": "x"'), 400, 'illegalArguments', 'malformed JSON');
    expectError(await rawPatch(content.id, '"just a string"'), 400, 'illegalArguments', 'object');
    const wrongMedia = await call(url(`/content/${content.id}`), { method: 'PATCH', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
    expectError(wrongMedia, 415, 'unsupportedMediaType');
    expect((await getContent(content.id)).body).toMatchObject({ name: 'strict.txt', lastModifiedAt: content.lastModifiedAt });
  });

  it('answers 409 while another user holds the lock; the holder may change it', async () => {
    const content = await newContent(service, { name: 'guarded.txt' });
    await lockAs(other, content.id);
    expectError(await patch(content.id, { name: 'taken over.txt' }), 409, 'conflict', 'locked by maint-other');
    expect((await getContent(content.id)).body.name).toBe('guarded.txt');
    const byHolder = await patch(content.id, { name: 'by holder.txt' }, other);
    expect(byHolder.status).toBe(200);
    expect(byHolder.body).toMatchObject({ name: 'by holder.txt', lockedBy: 'maint-other', lastModifiedBy: 'maint-other' });
  });

  it('keeps earlier versions read-only (409)', async () => {
    const [v1, v2] = await withTwoVersions('versioned.txt');
    expectError(await patch(v1.id, { name: 'renamed.txt' }), 409, 'conflict', 'earlier version');
    expectError(await tags('POST', v1.id, ['x']), 409, 'conflict', 'earlier version');
    expect((await patch(v2.id, { name: 'renamed.txt' })).body.name).toBe('renamed.txt');
    expect((await getContent(v1.id)).body.name).toBe('versioned.txt');
  });
});

describe('DELETE C/content/{id} and POST C/content/{id}/restore', () => {
  it('deactivates (204): readable by id, hidden from home, folders and searches; restore brings it back', async () => {
    const folder = await newFolder(service, 'Bin test');
    const content = await newContent(service, { name: 'binned.txt', parentId: folder.id, bytes: 'keep me' });
    const deleted = await remove(content.id);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();

    const got = await getContent(content.id);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: content.id, active: false, name: 'binned.txt', lastModifiedBy: 'admin' });
    expect(await childNames(folder.id)).toEqual([]);
    const search = await call(url('/content/search', { name: 'binned.txt' }));
    expect(search.body.count).toBe(0);
    // the bytes stay while it can be restored; a download must ask for deactivated entries (owner or admin)
    expect((await download(content.id)).status).toBe(404);
    expect(await download(content.id, { includeInactive: 'true' })).toEqual({ status: 200, text: 'keep me' });
    expect(await storedFiles(service)).toContain(content.resource.resourceSource.path);
    // deactivating again changes nothing
    expect((await remove(content.id)).status).toBe(204);

    const restored = await restore(content.id);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ _type: 'svc.model.content.Content', id: content.id, active: true, name: 'binned.txt', parent: { id: folder.id } });
    expect(await childNames(folder.id)).toEqual(['binned.txt']);
    expect((await call(url('/content/search', { name: 'binned.txt' }))).body.count).toBe(1);
    // restoring an active content answers it as it is
    const again = await restore(content.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(restored.body);
  });

  it('deactivates every version; restore by any version id', async () => {
    const [v1, v2] = await withTwoVersions('all-versions.txt');
    expect((await remove(v1.id)).status).toBe(204);
    const rows = await sql<{ active: boolean }>(service, 'select active from entry where chronical_id = ?', [v1.id]);
    expect(rows).toEqual([{ active: false }, { active: false }]);
    expect(await homeNames()).not.toContain('all-versions.txt');
    expect((await restore(v1.id)).status).toBe(200);
    expect((await getContent(v2.id)).body.active).toBe(true);
    expect(await homeNames()).toContain('all-versions.txt');
  });

  it('refuses to restore when the name was taken meanwhile (409); a renamed deactivated content restores', async () => {
    const first = await newContent(service, { name: 'contested.txt' });
    expect((await remove(first.id)).status).toBe(204);
    const second = await newContent(service, { name: 'contested.txt' });
    expectError(await restore(first.id), 409, 'conflict', "'contested.txt'");
    expect((await getContent(first.id)).body.active).toBe(false);
    const renamed = await patch(first.id, { name: 'contested (restored).txt' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.active).toBe(false);
    const restored = await restore(first.id);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ active: true, name: 'contested (restored).txt' });
    expect((await getContent(second.id)).body.active).toBe(true);
  });

  it('purges with permanent=true: every version, its rows and its bytes', async () => {
    const [v1, v2] = await withTwoVersions('purged.txt');
    const paths = [v1.resource.resourceSource.path, v2.resource.resourceSource.path];
    expect(paths[0]).not.toBe(paths[1]);
    expect(await storedFiles(service)).toEqual(expect.arrayContaining(paths));
    const purged = await remove(v2.id, { permanent: true });
    expect(purged.status).toBe(204);
    expectError(await getContent(v1.id), 404, 'notFound');
    expectError(await getContent(v2.id), 404, 'notFound');
    expect((await download(v2.id)).status).toBe(404);
    const files = await storedFiles(service);
    for (const path of paths) expect(files).not.toContain(path);
    expect(await resourceRows([v1.resource.id, v2.resource.id])).toEqual([]);
    expect(await sql(service, 'select id from entry where chronical_id = ?', [v1.id])).toEqual([]);
    expectError(await remove(v2.id, { permanent: true }), 404, 'notFound');
    expectError(await restore(v2.id), 404, 'notFound');
  });

  it('purges a deactivated content (emptying the bin)', async () => {
    const content = await newContent(service, { name: 'bin then purge.txt' });
    expect((await remove(content.id)).status).toBe(204);
    expect((await remove(content.id, { permanent: 'true' })).status).toBe(204);
    expectError(await getContent(content.id), 404, 'notFound');
    expect(await storedFiles(service)).not.toContain(content.resource.resourceSource.path);
  });

  it('answers 409 while another user holds the lock (both kinds of deletion)', async () => {
    const content = await newContent(service, { name: 'locked delete.txt' });
    await lockAs(other, content.id);
    expectError(await remove(content.id), 409, 'conflict', 'locked by maint-other');
    expectError(await remove(content.id, { permanent: true }), 409, 'conflict', 'locked by maint-other');
    expect((await getContent(content.id)).body.active).toBe(true);
    expect((await remove(content.id, {}, other)).status).toBe(204);
    expect((await getContent(content.id)).body.active).toBe(false);
  });

  it('answers 404 for unknown ids, folders and repositories; 400 for a bad permanent value', async () => {
    expectError(await remove('no-such-content'), 404, 'notFound', 'no-such-content');
    expectError(await restore('no-such-content'), 404, 'notFound');
    const folder = await newFolder(service, 'Delete me not as content');
    expectError(await remove(folder.id), 404, 'notFound');
    expectError(await restore(folder.id), 404, 'notFound');
    const content = await newContent(service, { name: 'survivor.txt' });
    expectError(await call(nowhere(`/content/${content.id}`), { method: 'DELETE' }), 404, 'notFound', "'nowhere'");
    expectError(await call(nowhere(`/content/${content.id}/restore`), { method: 'POST' }), 404, 'notFound');
    expectError(await remove(content.id, { permanent: 'maybe' }), 400, 'illegalArguments', 'permanent');
    expectError(await call(url(`/content/${content.id}`, { permanent: ['true', 'false'] }), { method: 'DELETE' }), 400, 'illegalArguments', 'permanent');
    expect((await getContent(content.id)).body.active).toBe(true);
    expect((await call(`${service.contentBase}/content/${content.id}`, { method: 'DELETE' })).status).toBe(401);
  });
});

describe('POST C/content/{id}/copy', () => {
  it('creates a new chronicle (201, version 1.0) with its own copy of the bytes and the metadata', async () => {
    const source = await newFolder(service, 'Copy source');
    const target = await newFolder(service, 'Copy target');
    const original = await newContent(service, {
      name: 'original.txt',
      parentId: source.id,
      bytes: 'original bytes',
      typeName: 'letter',
      tags: ['t1', 't2'],
      properties: { from: 'Ada' },
      mimeType: 'text/plain',
    });
    await lockAs(other, original.id);
    const { status, body } = await copy(original.id, { parentId: target.id }, other);
    expect(status).toBe(201);
    expect(body).toMatchObject({
      _type: 'svc.model.content.Content',
      name: 'original.txt',
      version: '1.0',
      versionStatus: 'CURRENT',
      active: true,
      owner: 'maint-other',
      createdBy: 'maint-other',
      lastModifiedBy: 'maint-other',
      typeName: 'letter',
      tags: ['t1', 't2'],
      properties: { from: 'Ada' },
      parent: { id: target.id },
      resource: { name: original.resource.name, mimeType: 'text/plain', fileSize: 14, md5: md5('original bytes'), creator: 'maint-other' },
    });
    expect(body.id).not.toBe(original.id);
    expect(body.chronicalId).toBe(body.id);
    expect(body).not.toHaveProperty('lockedBy');
    expect(body).not.toHaveProperty('predecessor');
    expect(body.resource.id).not.toBe(original.resource.id);
    expect(body.resource.resourceSource.path).not.toBe(original.resource.resourceSource.path);
    expect(await storedFiles(service)).toEqual(expect.arrayContaining([original.resource.resourceSource.path, body.resource.resourceSource.path]));
    expect(await download(body.id)).toEqual({ status: 200, text: 'original bytes' });
    expect(await childNames(target.id)).toEqual(['original.txt']);

    // purging the original leaves the copy whole
    expect((await remove(original.id, { permanent: true }, other)).status).toBe(204);
    expect(await storedFiles(service)).not.toContain(original.resource.resourceSource.path);
    expect(await download(body.id)).toEqual({ status: 200, text: 'original bytes' });
    expect(await resourceRows([body.resource.id])).toEqual([{ id: body.resource.id }]);
  });

  it('copies into the same folder only under a new name (409 otherwise); to the root with parentId null', async () => {
    const folder = await newFolder(service, 'Twin folder');
    const original = await newContent(service, { name: 'twin.txt', parentId: folder.id, bytes: 'twin' });
    const filesBefore = await storedFiles(service);
    expectError(await copy(original.id), 409, 'conflict', "'twin.txt'");
    expectError(await copy(original.id, {}), 409, 'conflict');
    expect(await storedFiles(service)).toEqual(filesBefore);
    const renamed = await copy(original.id, { name: 'twin (copy).txt' });
    expect(renamed.status).toBe(201);
    expect(renamed.body).toMatchObject({ name: 'twin (copy).txt', parent: { id: folder.id } });
    expect(await childNames(folder.id)).toEqual(['twin (copy).txt', 'twin.txt']);
    const atRoot = await copy(original.id, { parentId: null, name: 'twin at root.txt' });
    expect(atRoot.status).toBe(201);
    expect(atRoot.body).not.toHaveProperty('parent');
    expect(await homeNames()).toContain('twin at root.txt');
  });

  it('copies the version it is given', async () => {
    const [v1] = await withTwoVersions('two-step.txt');
    const old = await copy(v1.id, { name: 'from version 1.0.txt' });
    expect(old.status).toBe(201);
    expect(old.body.version).toBe('1.0');
    expect(await download(old.body.id)).toEqual({ status: 200, text: 'two-step.txt v1' });
  });

  it('answers 404, 400 and 409 without leaving bytes or rows behind', async () => {
    const original = await newContent(service, { name: 'copy errors.txt' });
    const files = await storedFiles(service);
    const [{ n: resourcesBefore }] = await sql<{ n: string }>(service, 'select count(*) as n from resource');
    expectError(await copy('no-such-content', {}), 404, 'notFound');
    const folder = await newFolder(service, 'Not copyable');
    expectError(await copy(folder.id, { name: 'x' }), 404, 'notFound');
    expectError(await copy(original.id, { parentId: 'no-such-folder' }), 404, 'notFound', 'no-such-folder');
    expectError(await call(nowhere(`/content/${original.id}/copy`), json('POST', { name: 'x' })), 404, 'notFound', "'nowhere'");
    for (const body of [{ name: '' }, { name: 'a/b' }, { name: '..' }, { name: 'esc\u001b' }, { name: 7 }, { parentId: false }, { target: 'x' }]) {
      const response = await copy(original.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.reasonCode).toBe('illegalArguments');
    }
    const malformed = await call(url(`/content/${original.id}/copy`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expectError(malformed, 400, 'illegalArguments', 'malformed JSON');
    expectError(await copy(original.id, {}), 409, 'conflict');
    expect(await storedFiles(service)).toEqual(files);
    const [{ n: resourcesAfter }] = await sql<{ n: string }>(service, 'select count(*) as n from resource');
    expect(resourcesAfter).toBe(resourcesBefore);
  });
});

describe('POST / DELETE C/content/{id}/tags', () => {
  it('adds tags once each and removes them; lastModifiedBy follows the caller', async () => {
    const content = await newContent(service, { name: 'tagged.txt', tags: ['start'] });
    await pause();
    const added = await tags('POST', content.id, ['alpha', 'beta', 'alpha', 'start'], other);
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ _type: 'svc.model.content.Content', id: content.id, tags: ['start', 'alpha', 'beta'], lastModifiedBy: 'maint-other', version: '1.0' });
    expect(added.body.lastModifiedAt > content.lastModifiedAt).toBe(true);
    const found = await call(url('/content/search', { tags: ['alpha', 'beta'] }));
    expect(found.status).toBe(200);
    expect(found.body.entries.map((e: { id: string }) => e.id)).toEqual([content.id]);

    const removed = await tags('DELETE', content.id, ['alpha', 'not-there']);
    expect(removed.status).toBe(200);
    expect(removed.body.tags).toEqual(['start', 'beta']);
    expect((await getContent(content.id)).body.tags).toEqual(['start', 'beta']);
    expect((await call(url('/content/search', { tags: 'alpha' }))).body.count).toBe(0);
  });

  it('answers 409 while another user holds the lock, 404 for unknown ids, 400 for missing or empty tags', async () => {
    const content = await newContent(service, { name: 'tag errors.txt' });
    await lockAs(other, content.id);
    expectError(await tags('POST', content.id, ['x']), 409, 'conflict', 'locked by maint-other');
    expectError(await tags('DELETE', content.id, ['x']), 409, 'conflict', 'locked by maint-other');
    expect((await tags('POST', content.id, ['by-holder'], other)).body.tags).toEqual(['by-holder']);

    expectError(await tags('POST', 'no-such-content', ['x']), 404, 'notFound');
    const folder = await newFolder(service, 'Untaggable');
    expectError(await tags('POST', folder.id, ['x']), 404, 'notFound');
    expectError(await call(nowhere(`/content/${content.id}/tags`, { tags: 'x' }), { method: 'POST' }), 404, 'notFound');
    expectError(await tags('POST', content.id), 400, 'illegalArguments', 'tags');
    expectError(await tags('DELETE', content.id), 400, 'illegalArguments', 'tags');
    expectError(await tags('POST', content.id, ['']), 400, 'illegalArguments', 'tag');
    expectError(await tags('POST', content.id, ['x'.repeat(129)]), 400, 'illegalArguments', '128');
    expect((await getContent(content.id)).body.tags).toEqual(['by-holder']);
  });
});

describe('concurrent changes', () => {
  it('loses no tag when many requests tag one content at once (the chronicle is locked per change)', async () => {
    const content = await newContent(service, { name: 'busy.txt' });
    const wanted = Array.from({ length: 12 }, (_, i) => `tag-${i}`);
    const answers = await Promise.all(wanted.map((tag) => tags('POST', content.id, [tag])));
    expect(answers.map((a) => a.status)).toEqual(wanted.map(() => 200));
    expect([...(await getContent(content.id)).body.tags].sort()).toEqual([...wanted].sort());
  });

  it('lets exactly one of several copies under the same name succeed, leaving no stray bytes', async () => {
    const original = await newContent(service, { name: 'raced.txt', bytes: 'race' });
    const files = await storedFiles(service);
    const answers = await Promise.all(Array.from({ length: 6 }, () => copy(original.id, { name: 'raced copy.txt' })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = answers.find((a) => a.status === 201)!.body;
    expect(await storedFiles(service)).toEqual([...files, winner.resource.resourceSource.path].sort());
    const pending = await sql(service, `select id from resource where state = 'pending'`);
    expect(pending).toEqual([]);
  });

  it('purges a content whose bytes\' removal deadlocked with a text being written: the removal runs again (204, nothing left)', async () => {
    const [v1, v2] = await withTwoVersions('deadlocked.txt');
    const resourceIds = [v1.resource.id, v2.resource.id];
    const paths = [v1.resource.resourceSource.path, v2.resource.resourceSource.path];
    // the uploads' own extractions finish first: otherwise they write these texts too, and a second deadlock
    // (also retried) may join the one below
    for (let waited = 0; (await sql(service, 'select 1 from text_extraction_queue')).length > 0; waited += 50) {
      expect(waited, 'the extractions finish').toBeLessThan(30_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // a text of the first version's bytes, as its extraction stores it
    await sql(service, `insert into resource_text (resource_id, repository_id, text) select id, repository_id, 'stored' from resource where id = ? on conflict (resource_id) do nothing`, [v1.resource.id]);
    const deadlocks = async () => Number((await sql<{ n: string }>(service, 'select deadlocks as n from pg_stat_database where datname = current_database()'))[0]!.n);
    const before = await deadlocks();
    // a writer of that text (an extraction's transaction) holds its row…
    const writer = new pg.Client({ connectionString: service.config.DATABASE_URL! });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(`update resource_text set text = 'rewritten' where resource_id = $1`, [v1.resource.id]);
      // …while the purge commits and its removal of the bytes' rows locks both and waits for that text…
      const purged = remove(v2.id, { permanent: true });
      for (let waited = 0; ; waited += 10) {
        const waiting = await sql(service, `select pid from pg_stat_activity where wait_event_type = 'Lock' and query like 'delete from resource r%'`);
        if (waiting.length > 0) break;
        expect(waited, 'the removal waits for the text').toBeLessThan(10_000);
        await pause();
      }
      // …and then asks for the resource the removal holds: Postgres breaks the cycle by failing the removal,
      // which waited longer
      await writer.query('select 1 from resource where id = $1 for key share', [v1.resource.id]);
      await writer.query('commit');
      expect((await purged).status).toBe(204);
    } finally {
      await writer.end();
    }
    // the writer's lock was granted while the removal held the row, so Postgres failed the removal; the counter
    // proves it was a deadlock. A backend reports it within a second or so (never less than one), and other
    // work of the service may add its own retried deadlocks: at least one more
    for (let waited = 0; (await deadlocks()) < before + 1; waited += 100) {
      expect(waited, 'the deadlock is counted').toBeLessThan(15_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await resourceRows(resourceIds)).toEqual([]);
    const files = await storedFiles(service);
    for (const path of paths) expect(files).not.toContain(path);
  });
});

describe('the working copy', () => {
  it('may be renamed by its holder, but not to a name taken in its folder (its check-in would clash)', async () => {
    const content = await newContent(service, { name: 'checked out.txt' });
    await newContent(service, { name: 'occupied.txt' });
    const checkedOut = await call(url(`/content/${content.id}/check-out`), { method: 'POST' });
    expect(checkedOut.status).toBe(200);
    const workingCopy = checkedOut.body;
    expect(workingCopy.versionStatus).toBe('WORKING_COPY');
    expectError(await patch(workingCopy.id, { name: 'occupied.txt' }), 409, 'conflict', "'occupied.txt'");
    // its own chronicle's name is no clash
    const props = await patch(workingCopy.id, { properties: { draft: true } });
    expect(props.status).toBe(200);
    expect(props.body).toMatchObject({ id: workingCopy.id, versionStatus: 'WORKING_COPY', properties: { draft: true } });
    const renamed = await patch(workingCopy.id, { name: 'checked out (new).txt' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('checked out (new).txt');
    // the latest version keeps its name until check-in
    expect((await getContent(content.id)).body.name).toBe('checked out.txt');
    // another user cannot touch either
    expectError(await patch(workingCopy.id, { name: 'x.txt' }, other), 409, 'conflict');
    expectError(await remove(content.id, {}, other), 409, 'conflict');
  });
});

describe('maintenance over GraphQL', () => {
  type Node = { id: string; name: string; active: boolean; version: string; tags: string[]; properties: Record<string, unknown>; parent: { id: string } | null };
  const fields = 'id name active version tags properties parent { id }';
  const gql = <T>(query: string, variables?: Record<string, unknown>, session?: string) => service.graphql<T>(query, variables, session);

  it('updateContent tells an absent parentId (stay) from null (the root)', async () => {
    const folder = await newFolder(service, 'GraphQL folder');
    const content = await newContent(service, { name: 'gql.txt', parentId: folder.id, properties: { x: 1 } });
    const update = (input: Record<string, unknown>) =>
      gql<{ updateContent: Node }>(`mutation($id: ID!, $input: UpdateContentInput!) { updateContent(repository: "default", id: $id, input: $input) { ${fields} } }`, {
        id: content.id,
        input,
      });
    const renamed = await update({ name: 'gql renamed.txt', properties: { y: 2 } });
    expect(renamed.errors).toBeUndefined();
    expect(renamed.data!.updateContent).toEqual({
      id: content.id,
      name: 'gql renamed.txt',
      active: true,
      version: '1.0',
      tags: [],
      properties: { x: 1, y: 2 },
      parent: { id: folder.id },
    });
    const toRoot = await update({ parentId: null });
    expect(toRoot.data!.updateContent.parent).toBeNull();
    const bad = await update({ name: '../x' });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    const unknown = await gql(`mutation { updateContent(repository: "default", id: "nope", input: { name: "x" }) { id } }`);
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
  });

  it('deleteContent, restoreContent, copyContent, addTags and removeTags', async () => {
    const content = await newContent(service, { name: 'gql lifecycle.txt', bytes: 'gql bytes' });
    const tagged = await gql<{ addTags: Node }>(`mutation($id: ID!) { addTags(repository: "default", id: $id, tags: ["g1", "g2"]) { ${fields} } }`, { id: content.id });
    expect(tagged.data!.addTags.tags).toEqual(['g1', 'g2']);
    const untagged = await gql<{ removeTags: Node }>(`mutation($id: ID!) { removeTags(repository: "default", id: $id, tags: ["g1"]) { ${fields} } }`, { id: content.id });
    expect(untagged.data!.removeTags.tags).toEqual(['g2']);

    const copied = await gql<{ copyContent: Node & { resource: { md5: string } } }>(
      `mutation($id: ID!) { copyContent(repository: "default", id: $id, input: { name: "gql copy.txt" }) { ${fields} resource { md5 } } }`,
      { id: content.id },
    );
    expect(copied.data!.copyContent).toMatchObject({ name: 'gql copy.txt', version: '1.0', tags: ['g2'], resource: { md5: md5('gql bytes') } });
    const clash = await gql(`mutation($id: ID!) { copyContent(repository: "default", id: $id) { id } }`, { id: content.id });
    expect(clash.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });

    const deleted = await gql<{ deleteContent: boolean }>(`mutation($id: ID!) { deleteContent(repository: "default", id: $id) }`, { id: content.id });
    expect(deleted.data).toEqual({ deleteContent: true });
    const read = await gql<{ content: Node }>(`query($id: ID!) { content(repository: "default", id: $id) { ${fields} } }`, { id: content.id });
    expect(read.data!.content.active).toBe(false);
    const restored = await gql<{ restoreContent: Node }>(`mutation($id: ID!) { restoreContent(repository: "default", id: $id) { ${fields} } }`, { id: content.id });
    expect(restored.data!.restoreContent.active).toBe(true);

    await lockAs(other, content.id);
    const locked = await gql(`mutation($id: ID!) { deleteContent(repository: "default", id: $id, permanent: true) }`, { id: content.id });
    expect(locked.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    const purged = await gql<{ deleteContent: boolean }>(`mutation($id: ID!) { deleteContent(repository: "default", id: $id, permanent: true) }`, { id: content.id }, other);
    expect(purged.data).toEqual({ deleteContent: true });
    const gone = await gql(`query($id: ID!) { content(repository: "default", id: $id) { id } }`, { id: content.id });
    expect(gone.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });

    const noRepository = await gql(`mutation { addTags(repository: "nowhere", id: "x", tags: ["a"]) { id } }`);
    expect(noRepository.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    const anonymous = await service.graphql(`mutation { restoreContent(repository: "default", id: "x") { id } }`, {}, '');
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ status: 401 });
  });
});
