import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
let bob: string;
const ids: Record<string, string> = {};

/** GET C/content/search with the given parameters (repeated for lists), as the spec writes it. */
const search = (query: Record<string, string | number | boolean | string[]>, session = service.adminSession) =>
  call(contentUrl(service, '/content/search', query, session));
const names = (body: { entries: { name: string }[] }) => body.entries.map((e) => e.name).sort();

beforeAll(async () => {
  service = await startTestService();
  bob = await service.createUserSession('bob');
  const reports = await newFolder(service, 'reports');
  ids.reports = reports.id;
  ids.a = (await newContent(service, { name: 'a.txt', parentId: reports.id, tags: ['red', 'blue'], bytes: 'alpha' })).id;
  ids.b = (await newContent(service, { name: 'b.pdf', parentId: reports.id, tags: ['red'], bytes: '%PDF-1.4 b' })).id;
  ids.c = (await newContent(service, { name: 'c.txt', tags: ['blue'], bytes: 'gamma', session: bob })).id;
  // a.txt gets versions 1.1 (replace) and a lock by the admin
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('alpha two')]), 'a.txt');
  expect((await call(contentUrl(service, `/content/${ids.a}/resource`), { method: 'PUT', body: form })).status).toBe(200);
  expect((await call(contentUrl(service, `/content/${ids.a}/lock`), { method: 'POST' })).status).toBe(200);
});
afterAll(() => service?.stop());

describe('GET C/content/search (spec endpoint 1)', () => {
  it('returns every latest entry without filters, in the EntriesResponse shape', async () => {
    const { status, body } = await search({});
    expect(status).toBe(200);
    expect(body).toMatchObject({ _type: 'svc.model.content.service.v1.request.crud.EntriesResponse', count: 4, duration: expect.any(Number) });
    expect(names(body)).toEqual(['a.txt', 'b.pdf', 'c.txt', 'reports']);
  });

  it('filters by each property; several filters must all match', async () => {
    expect(names((await search({ name: 'b.pdf' })).body)).toEqual(['b.pdf']);
    expect(names((await search({ owner: 'bob' })).body)).toEqual(['c.txt']);
    expect(names((await search({ createdBy: 'admin', entryType: 'CONTENT' })).body)).toEqual(['a.txt', 'b.pdf']);
    expect(names((await search({ lastModifiedBy: 'bob' })).body)).toEqual(['c.txt']);
    expect(names((await search({ parentId: ids.reports! })).body)).toEqual(['a.txt', 'b.pdf']);
    expect(names((await search({ mimeType: 'application/pdf' })).body)).toEqual(['b.pdf']);
    expect(names((await search({ tags: ['red'] })).body)).toEqual(['a.txt', 'b.pdf']);
    expect(names((await search({ tags: ['red', 'blue'] })).body)).toEqual(['a.txt']);
    expect(names((await search({ isLocked: true })).body)).toEqual(['a.txt']);
    // booleans in either case, as enum values are
    expect(names((await search({ isLocked: 'TRUE' })).body)).toEqual(['a.txt']);
    expect(names((await search({ isLocked: false, entryType: 'CONTENT' })).body)).toEqual(['b.pdf', 'c.txt']);
    expect(names((await search({ lockedBy: 'admin' })).body)).toEqual(['a.txt']);
    expect(names((await search({ version: '1.1' })).body)).toEqual(['a.txt']);
    expect(names((await search({ chronicalId: ids.c! })).body)).toEqual(['c.txt']);
    expect(names((await search({ versionStatus: 'CURRENT', parentId: ids.reports!, tags: ['blue'] })).body)).toEqual(['a.txt']);
    // in one folder the tags are checked on its children's rows (not through the tags' index): the same answers, page and count
    expect(names((await search({ parentId: ids.reports!, tags: ['red'] })).body)).toEqual(['a.txt', 'b.pdf']);
    expect(names((await search({ parentId: ids.reports!, tags: ['red', 'blue'] })).body)).toEqual(['a.txt']);
    const paged = (await search({ parentId: ids.reports!, tags: ['red'], limit: 1 })).body;
    expect(paged.count).toBe(2);
    expect(paged.entries).toHaveLength(1);
    expect((await search({ parentId: ids.reports!, tags: ['green'] })).body).toMatchObject({ count: 0, entries: [] });
    expect((await search({ name: 'nothing-like-this' })).body).toMatchObject({ count: 0, entries: [] });
  });

  it('includes every version with includeVersions=true', async () => {
    const { body } = await search({ chronicalId: ids.a!, includeVersions: true, orderBy: 'version', orderingDirection: 'desc' });
    expect(body.entries.map((e: { version: string }) => e.version)).toEqual(['1.1', '1.0']);
  });

  it('orders, pages and counts all matches', async () => {
    const first = await search({ entryType: 'CONTENT', orderBy: 'name', orderingDirection: 'desc', limit: 2 });
    expect(first.body.count).toBe(3);
    expect(first.body.entries.map((e: { name: string }) => e.name)).toEqual(['c.txt', 'b.pdf']);
    const second = await search({ entryType: 'CONTENT', orderBy: 'name', orderingDirection: 'desc', limit: 2, offset: 2 });
    expect(second.body).toMatchObject({ count: 3, entries: [{ name: 'a.txt' }] });
    const beyond = await search({ entryType: 'CONTENT', offset: 50 });
    expect(beyond.body).toMatchObject({ count: 3, entries: [] });
  });

  it('projects properties with includeProperties and excludeProperties', async () => {
    const only = await search({ name: 'b.pdf', includeProperties: ['name', 'version'] });
    expect(only.body.entries[0]).toEqual({ _type: 'svc.model.content.Content', id: ids.b, name: 'b.pdf', version: '1.0' });
    const without = await search({ name: 'b.pdf', excludeProperties: ['resource', 'parent'] });
    expect(without.body.entries[0]).not.toHaveProperty('resource');
    expect(without.body.entries[0]).not.toHaveProperty('parent');
    expect(without.body.entries[0]).toHaveProperty('owner', 'admin');
    // the names may also come comma-separated
    expect((await search({ name: 'b.pdf', includeProperties: 'name, version' })).body.entries[0]).toEqual(only.body.entries[0]);
    expect((await search({ name: 'b.pdf', excludeProperties: 'resource,parent' })).body.entries[0]).toEqual(without.body.entries[0]);
  });

  it('leaves out the virtual Folder.children unless it is asked for', async () => {
    const plain = await search({ name: 'reports' });
    expect(plain.body.entries[0]).not.toHaveProperty('children');
    const asks: Record<string, string[] | boolean>[] = [{ includeProperties: ['name', 'children'] }, { includeProperties: ['Folder.children'] }, { autoExclude: false }];
    for (const asked of asks) {
      const { body } = await search({ name: 'reports', ...asked });
      expect(body.entries[0].children.map((child: { name: string }) => child.name)).toEqual(['a.txt', 'b.pdf']);
      expect(body.entries[0].children[0]).toMatchObject({ _type: 'svc.model.content.Content', version: '1.1' });
    }
    // contents have no children, whatever is asked
    const contents = await search({ entryType: 'CONTENT', autoExclude: false });
    expect(contents.body.entries.every((entry: object) => !('children' in entry))).toBe(true);
    const home = await call(contentUrl(service, '/home', { includeProperties: ['name', 'children'] }));
    expect(home.body.entries.find((e: { name: string }) => e.name === 'reports').children).toHaveLength(2);
  });

  it('refuses bad parameters with a 400 that names them', async () => {
    const cases: [Record<string, string | string[]>, string][] = [
      [{ limit: 'abc' }, 'limit'],
      [{ limit: '5000' }, 'limit'],
      [{ offset: '-1' }, 'offset'],
      [{ orderBy: 'password' }, 'orderBy'],
      [{ orderingDirection: 'sideways' }, 'orderingDirection'],
      [{ entryType: 'FILE' }, 'entryType'],
      [{ versionStatus: 'DRAFT' }, 'versionStatus'],
      [{ isLocked: 'maybe' }, 'isLocked'],
      [{ includeVersions: 'yes' }, 'includeVersions'],
      [{ name: ['a', 'b'] }, 'name'],
    ];
    for (const [query, parameter] of cases) {
      const { status, body } = await search(query);
      expect({ query, status, reasonCode: body.reasonCode }).toEqual({ query, status: 400, reasonCode: 'illegalArguments' });
      expect(body.message).toContain(parameter);
    }
  });

  it("refuses a list parameter written with brackets (tags[]=a), which matched nothing and answered everything", async () => {
    const { status, body } = await call(`${contentUrl(service, '/content/search')}&${encodeURIComponent('tags[]')}=red`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringMatching(/tags\[\].*tags=a&tags=b/) });
  });

  it('needs a session', async () => {
    expect((await call(`${service.contentBase}/content/search`)).status).toBe(401);
    expect((await search({}, 'expired-or-made-up')).body).toMatchObject({ status: 401, reasonCode: 'notAuthenticated' });
  });

  it('searches one repository only', async () => {
    const created = await service.graphql('mutation { createRepository(input: { name: "archive" }) { id name } }');
    expect(created.data).toEqual({ createRepository: { id: 'svc.repository.archive', name: 'archive' } });
    const archive = `${service.baseUrl}/api/v1/access.svc.content.archive/v1`;
    const empty = await call(`${archive}/content/search?sessionId=${service.adminSession}`);
    expect(empty.body).toMatchObject({ count: 0, entries: [] });
    // a content of the default repository is not found through another one
    const wrong = await call(`${archive}/content/${ids.a}?sessionId=${service.adminSession}`);
    expect(wrong).toMatchObject({ status: 404, body: { reasonCode: 'notFound' } });
    const missing = await call(`${service.baseUrl}/api/v1/access.svc.content.nowhere/v1/content/search?sessionId=${service.adminSession}`);
    expect(missing).toMatchObject({ status: 404, body: { reasonCode: 'notFound' } });
  });

  it('answers the same through GraphQL', async () => {
    const result = await service.graphql<{ searchByProperties: { count: number; entries: { name: string }[] } }>(
      '{ searchByProperties(repository: "default", filter: { tags: ["red"] }, options: { orderBy: "name" }) { count entries { name } } }',
    );
    expect(result.data!.searchByProperties).toEqual({ count: 2, entries: [{ name: 'a.txt' }, { name: 'b.pdf' }] });
    // an explicit null is an absent field, in the filter and in the options, on all three searches
    const withNulls = await service.graphql<{ searchByProperties: { count: number; entries: { name: string }[] } }>(
      '{ searchByProperties(repository: "default", filter: { tags: ["red"], name: null, owner: null, isLocked: null, parentId: null }, options: { orderBy: "name", limit: null, offset: null, entryType: null }) { count entries { name } } }',
    );
    expect(withNulls.data?.searchByProperties).toEqual(result.data!.searchByProperties);
    const nullOrder = await service.graphql<{ searchByCondition: { count: number }; searchByText: { count: number } }>(
      `{ searchByCondition(repository: "default", condition: "'red' in tags", options: { orderBy: null, orderingDirection: null }) { count }
         searchByText(repository: "default", searchText: "a", options: { orderBy: null }) { count } }`,
    );
    expect(nullOrder.errors).toBeUndefined();
    expect(nullOrder.data!.searchByCondition.count).toBe(2);
  });
});

describe('GET C/content/search: locks, working copies, the version history and every orderBy', () => {
  const history: Record<string, string> = {};
  let base: string;
  const inHistory = (query: Record<string, string | number | boolean | string[]>) =>
    call(contentUrl(service, '/content/search', query, service.adminSession, base));
  const versionsOf = (body: { entries: { name: string; version: string; versionStatus: string }[] }) =>
    body.entries.map((e) => `${e.name} ${e.version} ${e.versionStatus}`).sort();
  const post = (path: string, body?: FormData) => call(contentUrl(service, path, {}, service.adminSession, base), { method: 'POST', body });

  beforeAll(async () => {
    expect((await service.graphql('mutation { createRepository(input: { name: "history" }) { id } }')).errors).toBeUndefined();
    base = `${service.baseUrl}/api/v1/access.svc.content.history/v1`;
    history.alpha = (await newFolder(service, 'alpha', undefined, undefined, base)).id;
    history.beta = (await newFolder(service, 'beta', undefined, undefined, base)).id;
    history.one = (await newContent(service, { base, name: 'one.txt', parentId: history.alpha, bytes: 'one', properties: { size: 30 } })).id;
    history.two = (await newContent(service, { base, name: 'two.txt', parentId: history.beta, bytes: 'two two', properties: { size: 10 } })).id;
    history.three = (await newContent(service, { base, name: 'three.md', bytes: 'three three three', mimeType: 'text/markdown' })).id;
    // one.txt: 1.0 → check-out → 2.0 (renamed uno.txt) → checked out again (a working copy, locked)
    const copy = await post(`/content/${history.one}/check-out`);
    expect(copy.status).toBe(200);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('one, the second major version')]), 'one.txt');
    const major = await post(`/content/${copy.body.id}/check-in`, form);
    expect(major.body).toMatchObject({ version: '2.0', versionStatus: 'CURRENT' });
    const renamed = await call(contentUrl(service, `/content/${major.body.id}`, {}, service.adminSession, base), json('PATCH', { name: 'uno.txt' }));
    expect(renamed.status).toBe(200);
    history.workingCopy = (await post(`/content/${history.one}/check-out`)).body.id;
    // two.txt: 1.1 by a replaced resource, locked
    const bytes = new FormData();
    bytes.append('file', new Blob([Buffer.from('two, again')]), 'two.txt');
    expect((await call(contentUrl(service, `/content/${history.two}/resource`, {}, service.adminSession, base), { method: 'PUT', body: bytes })).status).toBe(200);
    expect((await post(`/content/${history.two}/lock`)).status).toBe(200);
  });

  it('shows working copies only when versionStatus=WORKING_COPY asks for them', async () => {
    expect(versionsOf((await inHistory({ entryType: 'CONTENT' })).body)).toEqual(['three.md 1.0 CURRENT', 'two.txt 1.1 CURRENT', 'uno.txt 2.0 CURRENT']);
    const copies = await inHistory({ versionStatus: 'WORKING_COPY' });
    expect(copies.body).toMatchObject({ count: 1, entries: [{ id: history.workingCopy, name: 'uno.txt', versionStatus: 'WORKING_COPY', lockedBy: 'admin' }] });
    expect(versionsOf((await inHistory({ versionStatus: 'CURRENT' })).body)).toEqual(['three.md 1.0 CURRENT', 'two.txt 1.1 CURRENT', 'uno.txt 2.0 CURRENT']);
    expect((await inHistory({ versionStatus: 'WORKING_COPY', parentId: history.alpha, isLocked: true })).body.count).toBe(1);
    expect((await inHistory({ versionStatus: 'WORKING_COPY', parentId: history.beta })).body.count).toBe(0);
  });

  it('searches the whole version history with includeVersions=true', async () => {
    expect((await inHistory({ name: 'one.txt' })).body.count).toBe(0);
    expect(versionsOf((await inHistory({ name: 'one.txt', includeVersions: true })).body)).toEqual(['one.txt 1.0 CURRENT']);
    expect(versionsOf((await inHistory({ chronicalId: history.one!, includeVersions: true })).body)).toEqual(['one.txt 1.0 CURRENT', 'uno.txt 2.0 CURRENT']);
    expect(versionsOf((await inHistory({ chronicalId: history.one!, includeVersions: true, versionStatus: 'WORKING_COPY' })).body)).toEqual(['uno.txt 2.0 WORKING_COPY']);
    expect(versionsOf((await inHistory({ includeVersions: true, entryType: 'CONTENT', version: '1.0' })).body)).toEqual(['one.txt 1.0 CURRENT', 'three.md 1.0 CURRENT', 'two.txt 1.0 CURRENT']);
    expect(versionsOf((await inHistory({ includeVersions: true, mimeType: 'text/markdown' })).body)).toEqual(['three.md 1.0 CURRENT']);
  });

  it('filters by isLocked and lockedBy, over the latest versions and the history', async () => {
    expect(versionsOf((await inHistory({ isLocked: true })).body)).toEqual(['two.txt 1.1 CURRENT', 'uno.txt 2.0 CURRENT']);
    expect(versionsOf((await inHistory({ isLocked: false, entryType: 'CONTENT' })).body)).toEqual(['three.md 1.0 CURRENT']);
    expect(versionsOf((await inHistory({ lockedBy: 'admin', includeVersions: true })).body)).toEqual([
      'one.txt 1.0 CURRENT', 'two.txt 1.0 CURRENT', 'two.txt 1.1 CURRENT', 'uno.txt 2.0 CURRENT',
    ]);
    expect((await inHistory({ lockedBy: 'bob' })).body.count).toBe(0);
  });

  /** A property's value in a REST entry: dot paths, the resource shortcuts, parentId. */
  function valueOf(entry: Record<string, any>, property: string): unknown {
    const path = property === 'mimeType' || property === 'fileSize' ? `resource.${property}` : property === 'parentId' ? 'parent.id' : property;
    return path.split('.').reduce<any>((value, key) => (value === undefined || value === null ? undefined : value[key]), entry);
  }
  const versionKey = (v: string) => v.split('.').map((n) => n.padStart(9, '0')).join('.');

  it('orders by every orderable property, dot paths and custom properties too, missing values last', async () => {
    const orderable = [
      'id', 'chronicalId', 'name', 'entryType', 'active', 'owner', 'createdAt', 'createdBy', 'lastModifiedAt', 'lastModifiedBy',
      'lockedAt', 'lockedBy', 'version', 'versionStatus', 'typeName', 'parentId', 'comment', 'mimeType', 'fileSize',
      'resource.id', 'resource.name', 'resource.mimeType', 'resource.fileSize', 'resource.md5', 'resource.created', 'resource.creator',
      'parent.name', 'parent.createdAt', 'predecessor.version', 'predecessor.resource.fileSize', 'predecessor.parent.name', 'properties.size',
    ];
    const sortable = new Set(['createdAt', 'lastModifiedAt', 'lockedAt', 'resource.created', 'parent.createdAt', 'fileSize', 'resource.fileSize', 'predecessor.resource.fileSize', 'version', 'predecessor.version', 'properties.size']);
    for (const orderBy of orderable) {
      const pages = await Promise.all(
        (['asc', 'desc'] as const).map((orderingDirection) => inHistory({ orderBy, orderingDirection, includeVersions: true })),
      );
      const [asc, desc] = pages.map(({ status, body }) => {
        expect({ orderBy, status }).toEqual({ orderBy, status: 200 });
        expect(body.count).toBe(7); // two folders, one.txt 1.0, uno.txt 2.0, two.txt 1.0 and 1.1, three.md
        return (body.entries as Record<string, any>[]).map((entry) => ({ id: entry.id as string, value: valueOf(entry, orderBy) }));
      }) as [{ id: string; value: unknown }[], { id: string; value: unknown }[]];
      for (const rows of [asc, desc]) {
        // missing values last in both directions
        const firstMissing = rows.findIndex((row) => row.value === undefined);
        if (firstMissing >= 0) expect({ orderBy, rest: rows.slice(firstMissing).every((row) => row.value === undefined) }).toEqual({ orderBy, rest: true });
      }
      const present = (rows: typeof asc) => rows.filter((row) => row.value !== undefined).map((row) => row.id);
      expect({ orderBy, order: present(asc) }).toEqual({ orderBy, order: present(desc).reverse() });
      if (sortable.has(orderBy)) {
        const key = (value: unknown) => (orderBy.endsWith('version') ? versionKey(value as string) : typeof value === 'number' ? value : String(value));
        const values = asc.filter((row) => row.value !== undefined).map((row) => key(row.value));
        expect({ orderBy, values }).toEqual({ orderBy, values: [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) });
      }
    }
    expect((await inHistory({ orderBy: 'tags' })).body).toMatchObject({ status: 400, message: expect.stringContaining('orderBy') });
    expect((await inHistory({ orderBy: 'parent.password' })).body).toMatchObject({ status: 400, message: expect.stringContaining("unknown property 'parent.password'") });
    expect((await inHistory({ orderBy: 'properties.' })).body).toMatchObject({ status: 400, message: expect.stringContaining("unknown property 'properties.'") });
    // a custom property's name as a condition may write it
    expect((await inHistory({ orderBy: 'properties.x y' })).body).toMatchObject({ status: 400, message: expect.stringContaining("unknown property 'properties.x y'") });
  });
});

describe('GET C/content/search: names and tags as stored', () => {
  it('finds a name or tag given in another Unicode form (NFD) or with spaces around the name, as they are stored (NFC, trimmed)', async () => {
    const folder = await newFolder(service, 'unicode-forms');
    await newContent(service, { name: 'café.txt', parentId: folder.id, tags: ['gelb ü'], bytes: 'forms' });
    const decomposed = 'cafe\u0301.txt';
    expect(names((await search({ name: decomposed })).body)).toEqual(['café.txt']);
    expect(names((await search({ name: ' café.txt ' })).body)).toEqual(['café.txt']);
    expect(names((await search({ tags: ['gelb u\u0308'], parentId: folder.id })).body)).toEqual(['café.txt']);
  });

  it('counts the length of a tag and of a name in characters, not UTF-16 units', async () => {
    const emoji = '😀';
    const folder = await newFolder(service, emoji.repeat(255));
    expect(folder.name).toBe(emoji.repeat(255));
    const tagged = await newContent(service, { name: 'emoji-tag.txt', tags: [emoji.repeat(128)], bytes: 'x' });
    expect(tagged.tags).toEqual([emoji.repeat(128)]);
    const tooLong = await call(contentUrl(service, '/folder'), json('POST', { name: emoji.repeat(256) }));
    expect(tooLong.body).toMatchObject({ status: 400, message: 'name is longer than 255 characters' });
  });
});
