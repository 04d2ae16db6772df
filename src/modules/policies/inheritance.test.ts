import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// Inheritance policies over REST as DESIGN §4 writes the paths: folders carry tags and properties
// (POST/PATCH C/folder), an inheritance policy assigned to a folder hands them down to what is
// created in it (docs/administration.md).
let service: TestService;
const repositoryId = 'svc.repository.default';

const admin = (path: string, query: Record<string, string> = {}) => `${service.adminBase}${path}?${new URLSearchParams({ ...query, sessionId: service.adminSession })}`;
const form = (fields: Record<string, string>): RequestInit => ({ method: 'POST', body: new URLSearchParams(fields) });
async function inheritancePolicy(fields: Record<string, string>): Promise<string> {
  const created = await call(admin('/policy/inheritance'), form(fields));
  expect(created.status).toBe(201);
  return created.body.id;
}
const assign = async (policyId: string, folderId: string) =>
  expect((await call(admin('/policy/assignment', { policyId, repositoryId, folderId }), { method: 'POST' })).status).toBe(204);
async function folderWith(name: string, fields: { tags?: string[]; properties?: Record<string, unknown> }, parentId?: string): Promise<Record<string, any>> {
  const created = await call(contentUrl(service, '/folder'), json('POST', { name, parentId, ...fields }));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

let inheritAll: string;
let propertiesOnly: string;
let keepPolicies: string;
beforeAll(async () => {
  service = await startTestService();
  inheritAll = await inheritancePolicy({ name: 'hand-down-all' });
  propertiesOnly = await inheritancePolicy({ name: 'properties-only', inheritTags: 'false' });
  keepPolicies = await inheritancePolicy({ name: 'tags-but-no-policies', inheritPolicies: 'false' });
});
afterAll(() => service?.stop());

describe('folders carry tags and properties (POST and PATCH C/folder)', () => {
  it('are given at creation, replaced (tags) or merged (properties) by PATCH, and checked as a content\'s are', async () => {
    const folder = await folderWith('labelled', { tags: ['a', 'b', 'a'], properties: { client: 'acme', year: 2026 } });
    expect(folder).toMatchObject({ entryType: 'FOLDER', tags: ['a', 'b'], properties: { client: 'acme', year: 2026 } });
    const patched = await call(contentUrl(service, `/folder/${folder.id}`), json('PATCH', { tags: ['c'], properties: { year: null, region: 'eu' } }));
    expect(patched).toMatchObject({ status: 200, body: { tags: ['c'], properties: { client: 'acme', region: 'eu' } } });
    expect((await call(contentUrl(service, `/folder/${folder.id}`))).body).toMatchObject({ tags: ['c'], properties: { client: 'acme', region: 'eu' } });
    const renamedOnly = await call(contentUrl(service, `/folder/${folder.id}`), json('PATCH', { name: 'labelled-2' }));
    expect(renamedOnly.body).toMatchObject({ name: 'labelled-2', tags: ['c'] });
    expect((await call(contentUrl(service, `/folder/${folder.id}`), json('PATCH', { tags: null }))).body.tags).toEqual([]);

    for (const bad of [{ tags: [''] }, { tags: ['x'.repeat(129)] }, { properties: { 'bad name': 1 } }, { properties: [1] }]) {
      const refused = await call(contentUrl(service, '/folder'), json('POST', { name: 'bad', ...bad }));
      expect(refused, JSON.stringify(bad)).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    }
  });
});

describe('inheritTags and inheritCommonProperties take effect', () => {
  it('without an inheritance policy nothing is handed down (as before folders had tags)', async () => {
    const folder = await folderWith('plain', { tags: ['folder-tag'], properties: { client: 'acme' } });
    const content = await newContent(service, { parentId: folder.id, name: 'plain.txt', tags: ['own'] });
    expect(content).toMatchObject({ tags: ['own'], properties: {} });
    expect((await newFolder(service, 'plain-child', folder.id))).toMatchObject({ tags: [], properties: {} });
  });

  it('a policy with every flag: uploads and subfolders get the folder\'s tags and the properties they do not set, level after level', async () => {
    const project = await folderWith('project', { tags: ['project-x'], properties: { client: 'acme', region: 'eu' } });
    await assign(inheritAll, project.id);
    const upload = await newContent(service, { parentId: project.id, name: 'spec.txt', tags: ['draft'], properties: { region: 'us' } });
    expect(upload).toMatchObject({ tags: ['draft', 'project-x'], properties: { client: 'acme', region: 'us' } });

    // the subfolder takes the folder's, adds its own; the policy reaches it (inheritPolicies) and hands its tags on
    const phase = await folderWith('phase-1', { tags: ['phase-1'], properties: { phase: 1 } }, project.id);
    expect(phase).toMatchObject({ tags: ['phase-1', 'project-x'], properties: { client: 'acme', region: 'eu', phase: 1 } });
    const deep = await newContent(service, { parentId: phase.id, name: 'deep.txt' });
    expect(deep.tags.sort()).toEqual(['phase-1', 'project-x']);
    expect(deep.properties).toEqual({ client: 'acme', region: 'eu', phase: 1 });

    // the spec's search by tags finds what was inherited
    const found = await call(contentUrl(service, '/content/search', { tags: 'project-x', entryType: 'CONTENT' }));
    expect(found.body.entries.map((e: { id: string }) => e.id).sort()).toEqual([upload.id, deep.id].sort());
  });

  it('a copy into the folder inherits as an upload there would; a move keeps what the content had', async () => {
    const target = await folderWith('copies-land-here', { tags: ['landed'], properties: { shelf: 'b' } });
    await assign(inheritAll, target.id);
    const original = await newContent(service, { name: 'traveller.txt', tags: ['mine'], properties: { shelf: 'a' } });
    const copy = await call(contentUrl(service, `/content/${original.id}/copy`), json('POST', { parentId: target.id }));
    expect(copy).toMatchObject({ status: 201, body: { tags: ['mine', 'landed'], properties: { shelf: 'a' } } });
    const moved = await call(contentUrl(service, `/content/${original.id}`), json('PATCH', { parentId: target.id, name: 'moved.txt' }));
    expect(moved).toMatchObject({ status: 200, body: { tags: ['mine'], properties: { shelf: 'a' }, parent: { id: target.id } } });
  });

  it('each flag alone: inheritTags=false hands down properties only', async () => {
    const folder = await folderWith('props-only', { tags: ['kept-up-here'], properties: { client: 'acme' } });
    await assign(propertiesOnly, folder.id);
    expect(await newContent(service, { parentId: folder.id, name: 'p.txt' })).toMatchObject({ tags: [], properties: { client: 'acme' } });
  });

  it('inheritPolicies=false: the folder still hands down to its own entries, but its policy does not reach the subfolders', async () => {
    const top = await folderWith('closed-top', { tags: ['top'] });
    await assign(keepPolicies, top.id);
    expect((await newContent(service, { parentId: top.id, name: 'in-top.txt' })).tags).toEqual(['top']);
    const sub = await folderWith('closed-sub', { tags: ['sub'] }, top.id);
    expect(sub.tags).toEqual(['sub', 'top']);
    // no inheritance policy reaches `sub`: its entries get nothing of it
    expect((await newContent(service, { parentId: sub.id, name: 'in-sub.txt' })).tags).toEqual([]);
  });

  it('a folder\'s later change reaches new entries only; tags over the limit of an entry are a 400', async () => {
    const folder = await folderWith('changing', { tags: ['v1'] });
    await assign(inheritAll, folder.id);
    const before = await newContent(service, { parentId: folder.id, name: 'before.txt' });
    expect((await call(contentUrl(service, `/folder/${folder.id}`), json('PATCH', { tags: ['v2'] }))).status).toBe(200);
    expect((await newContent(service, { parentId: folder.id, name: 'after.txt' })).tags).toEqual(['v2']);
    expect((await call(contentUrl(service, `/content/${before.id}`))).body.tags).toEqual(['v1']);

    const full = await folderWith('full', { tags: Array.from({ length: 200 }, (_, i) => `f${i}`) });
    await assign(inheritAll, full.id);
    const tooMany = await uploadContent(service, { parentId: full.id, name: 'many.txt', tags: Array.from({ length: 100 }, (_, i) => `c${i}`) });
    expect(tooMany).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    expect(tooMany.body.message).toContain("inherited from folder 'full'");
  });
});
