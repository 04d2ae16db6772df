import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, sql, storedFiles } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

const restDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let service: TestService;
let otherUser: string;
beforeAll(async () => {
  service = await startTestService();
  otherUser = await service.createUserSession('folder-other');
});
afterAll(() => service?.stop());

const folderUrl = (id: string, query = {}) => contentUrl(service, `/folder/${id}`, query);
const names = (body: { entries: { name: string }[] }) => body.entries.map((entry) => entry.name);

describe('POST C/folder and GET C/folder/{id}', () => {
  it('creates a root folder and a subfolder with the spec fields', async () => {
    const { status, body } = await call(contentUrl(service, '/folder'), json('POST', { name: 'Projects' }));
    expect(status).toBe(201);
    expect(body).toEqual({
      _type: 'svc.model.content.Folder',
      id: expect.stringMatching(uuid),
      chronicalId: body.id,
      active: true,
      entryType: 'FOLDER',
      name: 'Projects',
      owner: 'admin',
      createdAt: expect.stringMatching(restDate),
      createdBy: 'admin',
      lastModifiedAt: body.createdAt,
      lastModifiedBy: 'admin',
      tags: [],
      properties: {},
      partition: 'access.svc.content.default',
    });
    const sub = await call(contentUrl(service, '/folder'), json('POST', { name: 'Alpha', parentId: body.id }));
    expect(sub.status).toBe(201);
    expect(sub.body.parent).toEqual(body);

    const got = await call(folderUrl(sub.body.id));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(sub.body);
  });

  it('rejects bad names (400), a clash (409) and an unknown parent (404)', async () => {
    const create = (body: unknown) => call(contentUrl(service, '/folder'), json('POST', body));
    for (const [name, words] of [
      ['', 'empty'],
      ['   ', 'empty'],
      ['a/b', "'/'"],
      ['a\\b', "'/'"],
      ['..', "'..'"],
      ['.', "'.'"],
      ['tab\there', 'control'],
      ['nul\u0000', 'control'],
      ['x'.repeat(256), '255'],
    ] as const) {
      const { status, body } = await create({ name });
      expect(status, JSON.stringify(name)).toBe(400);
      expect(body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 400, reasonCode: 'illegalArguments' });
      expect(body.message).toContain(words);
    }
    await newFolder(service, 'Taken');
    const clash = await create({ name: 'Taken' });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ status: 409, reasonCode: 'conflict' });
    expect(clash.body.message).toContain("'Taken'");
    // the same name in another folder is fine
    const holder = await newFolder(service, 'Holder');
    expect((await create({ name: 'Taken', parentId: holder.id })).status).toBe(201);

    const unknownParent = await create({ name: 'Orphan', parentId: 'no-such-folder' });
    expect(unknownParent.status).toBe(404);
    expect(unknownParent.body.message).toContain('no-such-folder');
  });

  it('rejects malformed JSON, wrong types, missing and unknown fields (400)', async () => {
    const raw = (text: string) => call(contentUrl(service, '/folder'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    const malformed = await raw('{"name": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain('malformed JSON');
    expect((await raw('["name"]')).status).toBe(400);
    const wrongType = await raw('{"name": 42}');
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toContain('name');
    const missing = await raw('{}');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe("invalid body: name is required");
    const unknown = await raw('{"name": "x", "color": "red"}');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('color');
  });

  it('answers 404 for an unknown folder, a content id, and an unknown repository; 401 without a session', async () => {
    const unknown = await call(folderUrl('no-such-folder'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 404, reasonCode: 'notFound' });
    const content = await newContent(service, { name: 'not-a-folder.txt' });
    expect((await call(folderUrl(content.id))).status).toBe(404);
    const repository = await call(contentUrl(service, '/folder', {}, service.adminSession, `${service.baseUrl}/api/v1/access.svc.content.nowhere/v1`), json('POST', { name: 'x' }));
    expect(repository.status).toBe(404);
    expect(repository.body.message).toContain("'nowhere'");
    expect((await call(`${service.contentBase}/folder/${content.id}`)).status).toBe(401);
  });
});

describe('GET C/folder/{id}/children and GET C/home', () => {
  let listed: Record<string, any>;
  beforeAll(async () => {
    listed = await newFolder(service, 'Listed');
    // created out of order: contents and folders interleaved
    await newContent(service, { name: 'b-doc.txt', parentId: listed.id });
    await newFolder(service, 'zeta', listed.id);
    await newContent(service, { name: 'a-doc.txt', parentId: listed.id });
    await newFolder(service, 'alpha', listed.id);
    await newContent(service, { name: 'c-doc.txt', parentId: listed.id });
  });

  it('lists folders first, then contents, each by name', async () => {
    const { status, body } = await call(folderUrl(`${listed.id}/children`));
    expect(status).toBe(200);
    expect(body._type).toBe('svc.model.content.service.v1.request.crud.EntriesResponse');
    expect(body.count).toBe(5);
    expect(typeof body.duration).toBe('number');
    expect(names(body)).toEqual(['alpha', 'zeta', 'a-doc.txt', 'b-doc.txt', 'c-doc.txt']);
    expect(body.entries.map((e: { _type: string }) => e._type)).toEqual([
      'svc.model.content.Folder',
      'svc.model.content.Folder',
      'svc.model.content.Content',
      'svc.model.content.Content',
      'svc.model.content.Content',
    ]);
    expect(body.entries[2].parent.id).toBe(listed.id);
  });

  it('pages with limit and offset; count is the total', async () => {
    const first = await call(folderUrl(`${listed.id}/children`, { limit: 2 }));
    expect(first.body.count).toBe(5);
    expect(names(first.body)).toEqual(['alpha', 'zeta']);
    const middle = await call(folderUrl(`${listed.id}/children`, { limit: 2, offset: 2 }));
    expect(middle.body.count).toBe(5);
    expect(names(middle.body)).toEqual(['a-doc.txt', 'b-doc.txt']);
    const last = await call(folderUrl(`${listed.id}/children`, { limit: 2, offset: 4 }));
    expect(names(last.body)).toEqual(['c-doc.txt']);
    const beyond = await call(folderUrl(`${listed.id}/children`, { offset: 10 }));
    expect(beyond.body.count).toBe(5);
    expect(beyond.body.entries).toEqual([]);
    const none = await call(folderUrl(`${listed.id}/children`, { limit: 0 }));
    expect(none.body.count).toBe(5);
    expect(none.body.entries).toEqual([]);
    const most = await call(folderUrl(`${listed.id}/children`, { limit: 1000 }));
    expect(most.status).toBe(200);
  });

  it('orders by a property and direction; filters by entryType', async () => {
    const desc = await call(folderUrl(`${listed.id}/children`, { orderBy: 'name', orderingDirection: 'desc' }));
    expect(names(desc.body)).toEqual(['zeta', 'c-doc.txt', 'b-doc.txt', 'alpha', 'a-doc.txt']);
    const folders = await call(folderUrl(`${listed.id}/children`, { entryType: 'FOLDER' }));
    expect(folders.body.count).toBe(2);
    expect(names(folders.body)).toEqual(['alpha', 'zeta']);
    const descending = await call(folderUrl(`${listed.id}/children`, { orderingDirection: 'DESC' }));
    expect(names(descending.body)).toEqual(['zeta', 'alpha', 'c-doc.txt', 'b-doc.txt', 'a-doc.txt']);
  });

  it('rejects a limit over 1000, a negative offset, an unknown orderBy and bad enum values (400)', async () => {
    for (const query of [{ limit: 5000 }, { limit: -1 }, { limit: 'ten' }, { offset: -5 }, { orderBy: 'unknown' }, { orderBy: 'name; drop table entry' }, { entryType: 'FILE' }, { orderingDirection: 'up' }]) {
      const { status, body } = await call(folderUrl(`${listed.id}/children`, query));
      expect(status, JSON.stringify(query)).toBe(400);
      expect(body.reasonCode).toBe('illegalArguments');
      expect(body.message).toContain(Object.keys(query)[0]);
    }
    const home = await call(contentUrl(service, '/home', { limit: 5000 }));
    expect(home.status).toBe(400);
    expect(home.body.message).toContain('limit');
    expect((await call(contentUrl(service, '/home', { orderBy: 'nope' }))).status).toBe(400);
  });

  it('answers 404 for the children of an unknown folder', async () => {
    const { status, body } = await call(folderUrl('no-such-folder/children'));
    expect(status).toBe(404);
    expect(body.reasonCode).toBe('notFound');
  });

  it('home lists the root level, folders first', async () => {
    await newContent(service, { name: '0-root-content.txt' });
    await newFolder(service, 'zz-root-folder');
    const { status, body } = await call(contentUrl(service, '/home', { limit: 1000 }));
    expect(status).toBe(200);
    const entries = body.entries as { name: string; entryType: string; parent?: unknown }[];
    expect(body.count).toBe(entries.length);
    const firstContent = entries.findIndex((e) => e.entryType === 'CONTENT');
    expect(firstContent).toBeGreaterThan(0);
    expect(entries.slice(0, firstContent).every((e) => e.entryType === 'FOLDER')).toBe(true);
    expect(entries.slice(firstContent).every((e) => e.entryType === 'CONTENT')).toBe(true);
    expect(entries.every((e) => e.parent === undefined)).toBe(true);
    const folderNames = entries.slice(0, firstContent).map((e) => e.name);
    expect(folderNames).toEqual([...folderNames].sort());
    expect(folderNames).toContain('zz-root-folder');
    expect(folderNames).not.toContain('alpha');
    expect(entries.map((e) => e.name)).toContain('0-root-content.txt');
  });
});

describe('PATCH C/folder/{id}', () => {
  it('renames a folder and sets lastModifiedAt/By', async () => {
    const folder = await newFolder(service, 'Old name');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { status, body } = await call(folderUrl(folder.id), json('PATCH', { name: 'New name' }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ _type: 'svc.model.content.Folder', id: folder.id, name: 'New name', createdAt: folder.createdAt, lastModifiedBy: 'admin' });
    expect(body.lastModifiedAt > folder.lastModifiedAt).toBe(true);
    expect((await call(folderUrl(folder.id))).body.name).toBe('New name');
    // an empty PATCH changes nothing
    const same = await call(folderUrl(folder.id), json('PATCH', {}));
    expect(same.status).toBe(200);
    expect(same.body).toEqual(body);
  });

  it('moves a folder with its subtree into another folder and back to the root', async () => {
    const source = await newFolder(service, 'Movable');
    const inner = await newContent(service, { name: 'inner.txt', parentId: source.id });
    const target = await newFolder(service, 'Target');
    const moved = await call(folderUrl(source.id), json('PATCH', { parentId: target.id }));
    expect(moved.status).toBe(200);
    expect(moved.body.parent).toMatchObject({ id: target.id, name: 'Target' });
    const children = await call(folderUrl(`${target.id}/children`));
    expect(names(children.body)).toEqual(['Movable']);
    // the content moved along: its folder is unchanged, its folder's parent is the target
    const content = await call(contentUrl(service, `/content/${inner.id}`));
    expect(content.body.parent.id).toBe(source.id);
    const home = await call(contentUrl(service, '/home', { limit: 1000 }));
    expect(names(home.body)).not.toContain('Movable');

    const back = await call(folderUrl(source.id), json('PATCH', { parentId: null }));
    expect(back.status).toBe(200);
    expect(back.body).not.toHaveProperty('parent');
    expect(names((await call(contentUrl(service, '/home', { limit: 1000 }))).body)).toContain('Movable');
    // '' means the root too; and rename + move at once
    const both = await call(folderUrl(source.id), json('PATCH', { parentId: target.id, name: 'Moved and renamed' }));
    expect(both.body).toMatchObject({ name: 'Moved and renamed', parent: { id: target.id } });
    const root = await call(folderUrl(source.id), json('PATCH', { parentId: '' }));
    expect(root.body).not.toHaveProperty('parent');
  });

  it('refuses to move a folder into itself or its own subtree (409)', async () => {
    const top = await newFolder(service, 'Top');
    const middle = await newFolder(service, 'Middle', top.id);
    const bottom = await newFolder(service, 'Bottom', middle.id);
    const intoItself = await call(folderUrl(top.id), json('PATCH', { parentId: top.id }));
    expect(intoItself.status).toBe(409);
    expect(intoItself.body).toMatchObject({ reasonCode: 'conflict' });
    expect(intoItself.body.message).toContain('into itself');
    const intoChild = await call(folderUrl(top.id), json('PATCH', { parentId: middle.id }));
    expect(intoChild.status).toBe(409);
    const intoGrandchild = await call(folderUrl(top.id), json('PATCH', { parentId: bottom.id }));
    expect(intoGrandchild.status).toBe(409);
    expect(intoGrandchild.body.message).toContain("subfolder 'Bottom'");
    // nothing moved
    expect((await call(folderUrl(top.id))).body).not.toHaveProperty('parent');
    // the other way round is fine
    const sideways = await call(folderUrl(bottom.id), json('PATCH', { parentId: top.id }));
    expect(sideways.status).toBe(200);
    expect(sideways.body.parent.id).toBe(top.id);
  });

  it('answers 409 on a name clash (rename or move), 404 for unknown folders, 400 for bad input', async () => {
    const holder = await newFolder(service, 'Clash holder');
    await newFolder(service, 'Existing', holder.id);
    const other = await newFolder(service, 'Other', holder.id);
    const rename = await call(folderUrl(other.id), json('PATCH', { name: 'Existing' }));
    expect(rename.status).toBe(409);
    expect(rename.body.message).toContain("'Existing'");
    const outside = await newFolder(service, 'Existing');
    const move = await call(folderUrl(outside.id), json('PATCH', { parentId: holder.id }));
    expect(move.status).toBe(409);
    expect((await call(folderUrl(outside.id))).body).not.toHaveProperty('parent');
    // a clash with a content's name counts too
    await newContent(service, { name: 'doc.txt', parentId: holder.id });
    expect((await call(folderUrl(other.id), json('PATCH', { name: 'doc.txt' }))).status).toBe(409);

    expect((await call(folderUrl('no-such-folder'), json('PATCH', { name: 'x' }))).status).toBe(404);
    const content = await newContent(service, { name: 'folderish.txt' });
    expect((await call(folderUrl(content.id), json('PATCH', { name: 'x' }))).status).toBe(404);
    const unknownTarget = await call(folderUrl(other.id), json('PATCH', { parentId: 'no-such-folder' }));
    expect(unknownTarget.status).toBe(404);
    expect(unknownTarget.body.message).toContain('no-such-folder');
    // a content is no target folder
    expect((await call(folderUrl(other.id), json('PATCH', { parentId: content.id }))).status).toBe(404);

    for (const body of [{ name: '' }, { name: 'a/b' }, { name: '..' }, { name: 'bell\u0007' }, { name: 5 }, { parentId: 7 }, { name: null }, { colour: 'red' }]) {
      const response = await call(folderUrl(other.id), json('PATCH', body));
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.reasonCode).toBe('illegalArguments');
    }
    const malformed = await call(folderUrl(other.id), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect((await call(folderUrl(other.id))).body.name).toBe('Other');
  });
});

describe('DELETE C/folder/{id}', () => {
  it('deletes an empty folder (204); it is gone', async () => {
    const folder = await newFolder(service, 'Empty one');
    const { status, body } = await call(folderUrl(folder.id), { method: 'DELETE' });
    expect(status).toBe(204);
    expect(body).toBeUndefined();
    expect((await call(folderUrl(folder.id))).status).toBe(404);
    expect((await call(folderUrl(folder.id), { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses a non-empty folder without recursive=true (409), then deletes the subtree and its bytes', async () => {
    const top = await newFolder(service, 'Full');
    const sub = await newFolder(service, 'Sub', top.id);
    const a = await newContent(service, { name: 'a.txt', parentId: top.id, bytes: 'aaa' });
    const b = await newContent(service, { name: 'b.txt', parentId: sub.id, bytes: 'bbb' });
    const paths = [a.resource.resourceSource.path, b.resource.resourceSource.path];
    expect(await storedFiles(service)).toEqual(expect.arrayContaining(paths));

    const refused = await call(folderUrl(top.id), { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ status: 409, reasonCode: 'conflict' });
    // as many entries as its children list counts (a second version of a.txt is not another entry)
    await call(contentUrl(service, `/content/${a.id}/check-out`), { method: 'POST' });
    await call(contentUrl(service, `/content/${a.id}/check-in`), { method: 'POST' });
    const children = (await call(contentUrl(service, `/folder/${top.id}/children`))).body.count;
    expect(children).toBe(2);
    expect((await call(folderUrl(top.id), { method: 'DELETE' })).body.message).toContain(`not empty (${children} entries)`);
    const refusedToo = await call(folderUrl(top.id, { recursive: false }), { method: 'DELETE' });
    expect(refusedToo.status).toBe(409);
    expect((await call(folderUrl(top.id))).status).toBe(200);

    const deleted = await call(folderUrl(top.id, { recursive: true }), { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    for (const id of [top.id, sub.id]) expect((await call(folderUrl(id))).status).toBe(404);
    for (const id of [a.id, b.id]) expect((await call(contentUrl(service, `/content/${id}`))).status).toBe(404);
    const files = await storedFiles(service);
    for (const path of paths) expect(files).not.toContain(path);
    const rows = await sql(service, 'select id from resource where id = any(array[?]::text[])', [[a.resource.id, b.resource.id]]);
    expect(rows).toEqual([]);
  });

  it('keeps a folder holding deactivated contents (restorable) without recursive (409); recursive purges them', async () => {
    const folder = await newFolder(service, 'Trash only');
    const content = await newContent(service, { name: 'gone.txt', parentId: folder.id });
    expect((await call(contentUrl(service, `/content/${content.id}`), { method: 'DELETE' })).status).toBe(204);
    expect((await call(folderUrl(`${folder.id}/children`))).body.count).toBe(0);
    const refused = await call(folderUrl(folder.id), { method: 'DELETE' });
    expect(refused).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('1 deactivated content that can still be restored') } });
    expect((await call(contentUrl(service, `/content/${content.id}`))).body.active).toBe(false);
    expect((await call(folderUrl(folder.id, { recursive: true }), { method: 'DELETE' })).status).toBe(204);
    expect((await call(contentUrl(service, `/content/${content.id}`))).status).toBe(404);
    expect((await call(contentUrl(service, `/content/${content.id}/restore`), { method: 'POST' })).status).toBe(404);
    expect(await storedFiles(service)).not.toContain(content.resource.resourceSource.path);
  });

  it('is blocked (409) by a content below that another user has locked', async () => {
    const top = await newFolder(service, 'Guarded', undefined, otherUser);
    const sub = await newFolder(service, 'Deeper', top.id, otherUser);
    const content = await newContent(service, { name: 'locked.txt', parentId: sub.id, session: otherUser });
    const locked = await call(contentUrl(service, `/content/${content.id}/lock`, {}, otherUser), { method: 'POST' });
    expect(locked.status).toBe(200);
    expect(locked.body.lockedBy).toBe('folder-other');

    const refused = await call(folderUrl(top.id, { recursive: true }), { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('locked by folder-other');
    expect((await call(folderUrl(sub.id))).status).toBe(200);
    expect((await call(contentUrl(service, `/content/${content.id}`))).status).toBe(200);

    // the holder of the lock may delete it
    const byHolder = await call(contentUrl(service, `/folder/${top.id}`, { recursive: true }, otherUser), { method: 'DELETE' });
    expect(byHolder.status).toBe(204);
    expect((await call(contentUrl(service, `/content/${content.id}`))).status).toBe(404);
  });

  it('rejects a bad recursive value (400) and answers 404 in an unknown repository', async () => {
    const folder = await newFolder(service, 'Kept');
    const bad = await call(folderUrl(folder.id, { recursive: 'yes' }), { method: 'DELETE' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('recursive');
    const repository = await call(contentUrl(service, `/folder/${folder.id}`, {}, service.adminSession, `${service.baseUrl}/api/v1/access.svc.content.nowhere/v1`), { method: 'DELETE' });
    expect(repository.status).toBe(404);
    expect((await call(folderUrl(folder.id))).status).toBe(200);
  });
});

describe('folders over GraphQL', () => {
  const fields = 'id name parent { id name }';

  it('updateFolder renames and moves; deleteFolder deletes', async () => {
    const a = await newFolder(service, 'gql-a');
    const b = await newFolder(service, 'gql-b');
    const moved = await service.graphql<{ updateFolder: { id: string; name: string; parent: { id: string } | null } }>(
      `mutation($id: ID!, $input: UpdateFolderInput!) { updateFolder(repository: "default", id: $id, input: $input) { ${fields} } }`,
      { id: b.id, input: { name: 'gql-b2', parentId: a.id } },
    );
    expect(moved.errors).toBeUndefined();
    expect(moved.data!.updateFolder).toEqual({ id: b.id, name: 'gql-b2', parent: { id: a.id, name: 'gql-a' } });

    const cycle = await service.graphql(
      `mutation($id: ID!, $input: UpdateFolderInput!) { updateFolder(repository: "default", id: $id, input: $input) { id } }`,
      { id: a.id, input: { parentId: b.id } },
    );
    expect(cycle.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });

    const notEmpty = await service.graphql(`mutation($id: ID!) { deleteFolder(repository: "default", id: $id) }`, { id: a.id });
    expect(notEmpty.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    const deleted = await service.graphql<{ deleteFolder: boolean }>(`mutation($id: ID!) { deleteFolder(repository: "default", id: $id, recursive: true) }`, { id: a.id });
    expect(deleted.data).toEqual({ deleteFolder: true });
    const gone = await service.graphql(`query($id: ID!) { folder(repository: "default", id: $id) { id } }`, { id: b.id });
    expect(gone.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });

    const unknownRepository = await service.graphql(`mutation { deleteFolder(repository: "nowhere", id: "x") }`);
    expect(unknownRepository.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
  });
});
