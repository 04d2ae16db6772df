import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, restDatePattern, sql, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
let userSession: string;
const repositoryId = 'svc.repository.default';

const admin = (path: string, query: Record<string, string | string[]> = {}, session: string | null = service.adminSession) => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) for (const one of [value].flat()) params.append(key, one);
  if (session !== null) params.set('sessionId', session);
  return `${service.adminBase}${path}?${params}`;
};
/** A form-encoded POST (repeated fields for lists), as the spec's examples send them. */
const form = (fields: Record<string, string | string[]>): RequestInit => {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(key, one);
  return { method: 'POST', body };
};
const multipart = (fields: Record<string, string | string[]>): RequestInit => {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(key, one);
  return { method: 'POST', body };
};
const assign = async (policyId: string, folderId: string) =>
  expect((await call(admin('/policy/assignment', { policyId, repositoryId, folderId }), { method: 'POST' })).status).toBe(204);

beforeAll(async () => {
  service = await startTestService();
  userSession = await service.createUserSession('erin');
  // the type registry: document > invoice > creditNote; image
  for (const [name, parentTypeName] of [['document'], ['invoice', 'document'], ['creditNote', 'invoice'], ['image']]) {
    const created = await call(admin('/type'), json('POST', { name, parentTypeName }));
    expect(created.status).toBe(201);
  }
});
afterAll(() => service?.stop());

describe('type registry (POST A/type, GET A/types)', () => {
  it('lists the types with their parents; a duplicate is 409, an unknown parent 400', async () => {
    const types = await call(admin('/types'));
    expect(types.body).toContainEqual({ name: 'creditNote', parentTypeName: 'invoice' });
    expect((await call(admin('/type'), json('POST', { name: 'image' }))).status).toBe(409);
    expect((await call(admin('/type'), json('POST', { name: 'x', parentTypeName: 'nothing' }))).status).toBe(400);
  });
});

describe('policy creation (spec endpoints 6–8)', () => {
  it('creates a default type policy from a form, with either spelling of defaultTypeName', async () => {
    const first = await call(admin('/policy/default-type'), form({ name: 'invoices by default', technicalName: 'dt-invoice', defaultTypeName: 'invoice' }));
    expect(first).toMatchObject({ status: 201, body: { technicalName: 'dt-invoice', kind: 'DEFAULT_TYPE', fields: { defaultTypeName: 'invoice' } } });
    const second = await call(admin('/policy/default-type'), multipart({ name: 'images', defaultType: 'image' }));
    expect(second).toMatchObject({ status: 201, body: { technicalName: 'images', fields: { defaultTypeName: 'image' } } });
  });

  it('creates an inheritance policy whose booleans default to true', async () => {
    const created = await call(admin('/policy/inheritance'), form({ name: 'inherit-all' }));
    expect(created.body.fields).toEqual({ inheritAcl: true, inheritClassification: true, inheritCommonProperties: true, inheritPolicies: true, inheritTags: true });
    expect(created.body.createdAt).toMatch(restDatePattern);
    const some = await call(admin('/policy/inheritance'), multipart({ name: 'no-policies', inheritPolicies: 'false', inheritTags: 'false' }));
    expect(some.body.fields).toMatchObject({ inheritPolicies: false, inheritTags: false, inheritAcl: true });
    expect((await call(admin('/policy/inheritance'), form({ name: 'bad', inheritTags: 'yes' }))).status).toBe(400);
  });

  it('creates type restrictions with repeated list fields and either spelling of the denied types', async () => {
    const denied = await call(admin('/policy/type-restriction'), form({ name: 'no-invoices', description: 'keep invoices out', restrictedTypeNames: ['invoice'], includeSubTypes: 'true' }));
    expect(denied).toMatchObject({ status: 201, body: { fields: { deniedTypeNames: ['invoice'], allowedTypeNames: [], includeSubTypes: true, description: 'keep invoices out' } } });
    const allowed = await call(admin('/policy/type-restriction'), multipart({ name: 'documents-only', allowedTypeNames: ['document', 'image'], includeSubTypes: 'false' }));
    expect(allowed.body.fields).toMatchObject({ allowedTypeNames: ['document', 'image'], includeSubTypes: false });
    expect((await call(admin('/policy/type-restriction'), form({ name: 'empty' }))).status).toBe(400);
    // an empty field names no type
    const emptyField = await call(admin('/policy/type-restriction'), form({ name: 'empty-denied', allowedTypeNames: ['document'], deniedTypeNames: [''] }));
    expect(emptyField).toMatchObject({ status: 201, body: { fields: { allowedTypeNames: ['document'], deniedTypeNames: [] } } });
    expect((await call(admin('/policy/by-technical-name', { technicalName: 'empty-denied' }), { method: 'DELETE' })).status).toBe(200);
    // a type both allowed and denied contradicts itself
    const both = await call(admin('/policy/type-restriction'), form({ name: 'contradiction', allowedTypeNames: ['document'], deniedTypeNames: ['document'] }));
    expect(both.body).toMatchObject({ status: 400, reasonCode: 'illegalArguments', message: "a type is either allowed or denied, not both: 'document'" });
  });

  it('refuses a duplicate technical name (409), a non-administrator (403) and a missing session (401)', async () => {
    expect((await call(admin('/policy/inheritance'), form({ name: 'inherit-all' }))).status).toBe(409);
    expect((await call(admin('/policy/inheritance', {}, userSession), form({ name: 'mine' }))).status).toBe(403);
    expect((await call(admin('/policy/inheritance', {}, null), form({ name: 'mine' }))).status).toBe(401);
    expect((await call(admin('/policies', {}, userSession))).status).toBe(403);
  });

  it('GET A/policies lists them; the gateway answers the same', async () => {
    const listed = await call(admin('/policies'));
    expect(listed.body.map((p: { technicalName: string }) => p.technicalName)).toEqual(['documents-only', 'dt-invoice', 'images', 'inherit-all', 'no-invoices', 'no-policies']);
    const viaGateway = await service.graphql<{ policies: { technicalName: string }[] }>('{ policies { technicalName kind } }');
    expect(viaGateway.data?.policies).toHaveLength(6);
  });
});

const policyId = async (technicalName: string) => ((await call(admin('/policies'))).body as { id: string; technicalName: string }[]).find((p) => p.technicalName === technicalName)!.id;

describe('policies take effect in the content operations', () => {
  it('gives new content without a type the default type of its folder (and of folders above it)', async () => {
    const folder = await newFolder(service, 'invoices');
    await assign(await policyId('dt-invoice'), folder.id);
    expect((await newContent(service, { parentId: folder.id, name: 'a.txt' })).typeName).toBe('invoice');
    expect((await newContent(service, { parentId: folder.id, name: 'b.txt', typeName: 'document' })).typeName).toBe('document');
    const below = await newFolder(service, 'below', folder.id);
    expect((await newContent(service, { parentId: below.id, name: 'c.txt' })).typeName).toBe('invoice');
    const untyped = await newContent(service, { name: 'root.txt' });
    expect(untyped.typeName).toBeFalsy();
    // a copy is new content in its folder: untyped, it gets the default type there; typed, it keeps its own
    const copied = await call(contentUrl(service, `/content/${untyped.id}/copy`), json('POST', { parentId: below.id }));
    expect(copied).toMatchObject({ status: 201, body: { typeName: 'invoice' } });
    const typed = await newContent(service, { name: 'typed.txt', typeName: 'document' });
    expect((await call(contentUrl(service, `/content/${typed.id}/copy`), json('POST', { parentId: folder.id }))).body.typeName).toBe('document');
  });

  it('refuses (409) creating, moving, retyping, copying and checking in content of a denied type, subtypes included', async () => {
    const closed = await newFolder(service, 'no-invoices-here');
    await assign(await policyId('no-invoices'), closed.id);
    const refused = await uploadContent(service, { parentId: closed.id, name: 'credit.txt', typeName: 'creditNote' });
    expect(refused).toMatchObject({ status: 409, body: { reasonCode: 'conflict' } });
    expect(refused.body.message).toContain('denied');
    expect((await uploadContent(service, { parentId: closed.id, name: 'pic.txt', typeName: 'image' })).status).toBe(201);
    const invoice = await newContent(service, { name: 'inv.txt', typeName: 'invoice' });
    expect((await call(contentUrl(service, `/content/${invoice.id}`), json('PATCH', { parentId: closed.id }))).status).toBe(409);
    expect((await call(contentUrl(service, `/content/${invoice.id}/copy`), { ...json('POST', { parentId: closed.id }) })).status).toBe(409);
    const image = await newContent(service, { parentId: closed.id, name: 'img2.txt', typeName: 'image' });
    expect((await call(contentUrl(service, `/content/${image.id}`), json('PATCH', { typeName: 'invoice' }))).status).toBe(409);
    // a content checked out before the restriction was assigned cannot be checked in there
    const late = await newFolder(service, 'late');
    const draft = await newContent(service, { parentId: late.id, name: 'draft.txt', typeName: 'creditNote' });
    expect((await call(contentUrl(service, `/content/${draft.id}/check-out`), { method: 'POST' })).status).toBe(200);
    await assign(await policyId('no-invoices'), late.id);
    const checkIn = await call(contentUrl(service, `/content/${draft.id}/check-in`), { method: 'POST', body: new FormData() });
    expect(checkIn.status).toBe(409);
  });

  it('refuses (409) moving a folder that holds content of a denied type, at any depth, into the restricted folder; nothing moves', async () => {
    const closed = await newFolder(service, 'closed-to-folders');
    await assign(await policyId('no-invoices'), closed.id);
    const carrier = await newFolder(service, 'carrier');
    const inner = await newFolder(service, 'inner', carrier.id);
    await newContent(service, { parentId: inner.id, name: 'deep-credit.txt', typeName: 'creditNote' });
    const refused = await call(contentUrl(service, `/folder/${carrier.id}`), json('PATCH', { parentId: closed.id }));
    expect(refused).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('denied') } });
    expect((await call(contentUrl(service, `/folder/${carrier.id}`))).body.parent ?? null).toBeNull();
    const images = await newFolder(service, 'images-only');
    await newContent(service, { parentId: images.id, name: 'pic.txt', typeName: 'image' });
    const moved = await call(contentUrl(service, `/folder/${images.id}`), json('PATCH', { parentId: closed.id }));
    expect(moved).toMatchObject({ status: 200, body: { parent: { id: closed.id } } });
  });

  it('an allowed list without includeSubTypes takes the named types only, and refuses untyped content', async () => {
    const strict = await newFolder(service, 'strict');
    await assign(await policyId('documents-only'), strict.id);
    expect((await uploadContent(service, { parentId: strict.id, name: 'd.txt', typeName: 'document' })).status).toBe(201);
    expect((await uploadContent(service, { parentId: strict.id, name: 'i.txt', typeName: 'invoice' })).status).toBe(409);
    expect((await uploadContent(service, { parentId: strict.id, name: 'u.txt' })).status).toBe(409);
  });

  it('inheritance: inheritPolicies=false stops the policies above; one inheritance policy per folder', async () => {
    const top = await newFolder(service, 'top');
    await assign(await policyId('no-invoices'), top.id);
    const cut = await newFolder(service, 'cut', top.id);
    await assign(await policyId('no-policies'), cut.id);
    const under = await newFolder(service, 'under', cut.id);
    expect((await uploadContent(service, { parentId: cut.id, name: 'x.txt', typeName: 'invoice' })).status).toBe(409);
    expect((await uploadContent(service, { parentId: under.id, name: 'x.txt', typeName: 'invoice' })).status).toBe(201);
    // without an inheritance policy on the way, the restriction reaches every level below
    const deep = await newFolder(service, 'deep', (await newFolder(service, 'mid', top.id)).id);
    expect((await uploadContent(service, { parentId: deep.id, name: 'x.txt', typeName: 'creditNote' })).status).toBe(409);

    const tagged = await newFolder(service, 'tagged');
    await assign(await policyId('inherit-all'), tagged.id);
    // a second inheritance policy on one folder is ambiguous
    expect((await call(admin('/policy/assignment', { policyId: await policyId('no-policies'), repositoryId, folderId: tagged.id }), { method: 'POST' })).status).toBe(409);
  });

  it('assignment answers 404 for an unknown policy or folder, 400 for a malformed repositoryId; unassigning works once; GraphQL policyAssignments lists it meanwhile', async () => {
    const folder = await newFolder(service, 'assignments');
    const id = await policyId('images');
    const listed = async (variables: Record<string, unknown> = { repositoryId }, session?: string) =>
      service.graphql<{ policyAssignments: { policyId: string; repositoryId: string; folderId: string; folderName: string }[] }>(
        'query($repositoryId: ID) { policyAssignments(repositoryId: $repositoryId) { policyId repositoryId folderId folderName } }',
        variables,
        session,
      );
    const inFolder = async (variables?: Record<string, unknown>) => (await listed(variables)).data!.policyAssignments.filter((each) => each.folderId === folder.id);
    expect((await call(admin('/policy/assignment', { policyId: 'nope', repositoryId, folderId: folder.id }), { method: 'POST' })).status).toBe(404);
    expect((await call(admin('/policy/assignment', { policyId: id, repositoryId, folderId: 'nope' }), { method: 'POST' })).status).toBe(404);
    expect((await call(admin('/policy/assignment', { policyId: id, repositoryId: 'svc.repository.nowhere', folderId: folder.id }), { method: 'POST' })).status).toBe(404);
    expect((await call(admin('/policy/assignment', { policyId: id, repositoryId: 'default', folderId: folder.id }), { method: 'POST' })).status).toBe(400);
    await assign(id, folder.id);
    const assigned = [{ policyId: id, repositoryId, folderId: folder.id, folderName: 'assignments' }];
    expect(await inFolder()).toEqual(assigned);
    expect(await inFolder({})).toEqual(assigned);
    expect((await listed({ repositoryId: 'default' })).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments' });
    expect((await listed({ repositoryId }, userSession)).errors?.[0]?.extensions).toMatchObject({ status: 403 });
    expect((await newContent(service, { parentId: folder.id, name: 'p.txt' })).typeName).toBe('image');
    expect((await call(admin('/policy/assignment', { policyId: id, repositoryId, folderId: folder.id }), { method: 'DELETE' })).status).toBe(204);
    expect(await inFolder()).toEqual([]);
    expect((await newContent(service, { parentId: folder.id, name: 'q.txt' })).typeName).toBeFalsy();
    expect((await call(admin('/policy/assignment', { policyId: id, repositoryId, folderId: folder.id }), { method: 'DELETE' })).status).toBe(404);
  });
});

/**
 * `levels` folders, each inside the one before, under `parentId` (null: the root), written in one
 * statement as a tree made before folder depth was bounded could be: their ids, outermost first.
 */
async function folderChain(prefix: string, parentId: string | null, levels: number): Promise<string[]> {
  await sql(
    service,
    `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, parent_id)
     select ?::text || i, r.id, 'FOLDER', ?::text || i, ?::text || i, 'admin', 'admin', 'admin', case when i = 1 then ?::text else ?::text || (i - 1) end
       from generate_series(1, ?::int) i, repository r where r.name = 'default'`,
    [`${prefix}-`, `${prefix}-`, `${prefix}-`, parentId, `${prefix}-`, levels],
  );
  return Array.from({ length: levels }, (_, index) => `${prefix}-${index + 1}`);
}

/** A content of `typeName` in `folderId`, written directly (uploads into a folder too deep are refused). */
const contentRow = (id: string, folderId: string, typeName: string) =>
  sql(
    service,
    `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, parent_id, type_name, version, version_major, version_minor, version_status)
     select ?, r.id, 'CONTENT', ?, ?, 'admin', 'admin', 'admin', ?, ?, '1.0', 1, 0, 'CURRENT' from repository r where r.name = 'default'`,
    [id, id, `${id}.txt`, folderId, typeName],
  );

const parentOf = async (folderId: string) => (await call(contentUrl(service, `/folder/${folderId}`))).body.parent?.id ?? null;

describe('folders lie at most 1,000 levels deep; the policies above reach the deepest of them', () => {
  it('a type restriction reaches content 1,000 levels down; no folder is created or moved deeper (409)', async () => {
    const closed = await newFolder(service, 'closed-at-the-top');
    await assign(await policyId('no-invoices'), closed.id);
    const chain = await folderChain('bounded', closed.id, 999);
    const bottom = chain.at(-1)!; // level 1000
    const denied = await uploadContent(service, { parentId: bottom, name: 'credit.txt', typeName: 'creditNote' });
    expect(denied).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('denied') } });
    expect((await uploadContent(service, { parentId: bottom, name: 'pic.txt', typeName: 'image' })).status).toBe(201);
    const invoice = await newContent(service, { name: 'bounded-invoice.txt', typeName: 'invoice' });
    expect((await call(contentUrl(service, `/content/${invoice.id}`), json('PATCH', { parentId: bottom }))).status).toBe(409);

    const tooDeep = await call(contentUrl(service, '/folder'), json('POST', { name: 'level-1001', parentId: bottom }));
    expect(tooDeep).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: `folder 'bounded-999' lies 1000 levels deep, the deepest a folder may: it cannot hold another folder` } });
    expect((await newFolder(service, 'level-1000', chain.at(-2)!)).parent.id).toBe(chain.at(-2));

    // a folder with a subfolder takes two levels: under level 999 the subfolder would be at 1001
    const carrier = await newFolder(service, 'carrier-of-two');
    await newFolder(service, 'second-level', carrier.id);
    const moved = await call(contentUrl(service, `/folder/${carrier.id}`), json('PATCH', { parentId: chain.at(-2) }));
    expect(moved).toMatchObject({ status: 409, body: { message: `folder 'carrier-of-two' cannot be moved there: its folders would lie more than 1000 levels deep, deeper than a folder may` } });
    expect(await parentOf(carrier.id)).toBeNull();
    expect((await call(contentUrl(service, `/folder/${carrier.id}`), json('PATCH', { parentId: chain.at(-3) }))).status).toBe(200);
  });

  it('a folder found deeper (made before the bound) refuses what is placed in it, instead of escaping the restriction above; moved up, it takes the rule again', async () => {
    const closed = await newFolder(service, 'closed-over-an-old-tree');
    await assign(await policyId('no-invoices'), closed.id);
    const chain = await folderChain('old', closed.id, 1001);
    const bottom = chain.at(-1)!; // level 1002
    for (const typeName of ['creditNote', 'image']) {
      const refused = await uploadContent(service, { parentId: bottom, name: `${typeName}.txt`, typeName });
      expect(refused).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: `folder '${bottom}' lies more than 1000 levels deep, deeper than a folder may: move it up before placing anything in it` } });
    }
    expect((await call(contentUrl(service, '/folder'), json('POST', { name: 'below', parentId: bottom }))).status).toBe(409);
    // moved up into the restricted folder itself (levels 2 to 502), the rule reaches it
    expect((await call(contentUrl(service, `/folder/${chain[500]}`), json('PATCH', { parentId: closed.id }))).status).toBe(200);
    const denied = await uploadContent(service, { parentId: bottom, name: 'credit.txt', typeName: 'creditNote' });
    expect(denied).toMatchObject({ status: 409, body: { message: expect.stringContaining('denied') } });
    expect((await uploadContent(service, { parentId: bottom, name: 'pic.txt', typeName: 'image' })).status).toBe(201);
  });

  it('moving a subtree under a restricted folder checks the content at its bottom: 900 levels down refused by type, 1,200 by depth; nothing moves', async () => {
    const closed = await newFolder(service, 'closed-to-deep-trees');
    await assign(await policyId('no-invoices'), closed.id);
    for (const [prefix, levels, message] of [
      ['tall', 900, "type 'creditNote' is denied"],
      ['taller', 1200, 'more than 1000 levels deep'],
    ] as const) {
      const chain = await folderChain(prefix, null, levels);
      await contentRow(`${prefix}-credit`, chain.at(-1)!, 'creditNote');
      const refused = await call(contentUrl(service, `/folder/${chain[0]}`), json('PATCH', { parentId: closed.id }));
      expect(refused, prefix).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining(message) } });
      expect(await parentOf(chain[0]!)).toBeNull();
    }
  });
});

describe('policy deletion (spec endpoint 9)', () => {
  const jobResponse = { _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse', state: 'Done', duration: expect.any(Number) };

  it('deletes by id, by repeated policyIds, by technical name; an unknown one is a 404 and deletes nothing', async () => {
    const unknown = await call(admin('/policies', { policyIds: [await policyId('images'), 'unknown-id'] }), { method: 'DELETE' });
    expect(unknown.status).toBe(404);
    expect((await call(admin('/policies'))).body).toHaveLength(6);
    expect((await call(admin('/policy', { policyId: 'unknown-id' }), { method: 'DELETE' })).status).toBe(404);
    expect((await call(admin('/policy/by-technical-name', { technicalName: 'unknown' }), { method: 'DELETE' })).status).toBe(404);

    const one = await call(admin('/policy', { policyId: await policyId('images') }), { method: 'DELETE' });
    expect(one).toMatchObject({ status: 200, body: { ...jobResponse, deleted: 1 } });
    const two = await call(admin('/policies', { policyIds: [await policyId('dt-invoice'), await policyId('documents-only')] }), { method: 'DELETE' });
    expect(two.body).toMatchObject({ ...jobResponse, deleted: 2 });
    const named = await call(admin('/policy/by-technical-name', { technicalName: 'no-policies' }), { method: 'DELETE' });
    expect(named.body).toMatchObject({ deleted: 1 });
    const several = await call(admin('/policies/by-technical-names', { technicalNames: ['no-invoices'] }), { method: 'DELETE' });
    expect(several.body).toMatchObject({ deleted: 1 });
    expect((await call(admin('/policy', { policyId: 'x' }, userSession), { method: 'DELETE' })).status).toBe(403);
    // GraphQL: ids and technical names together are a 400, and nothing is deleted
    const before = (await call(admin('/policies'))).body.length;
    const both = await service.graphql('mutation { deletePolicies(ids: ["unknown-id"], technicalNames: ["inherit-all"]) { deleted } }');
    expect(both.errors?.[0]).toMatchObject({ message: expect.stringContaining('not both'), extensions: { reasonCode: 'illegalArguments', status: 400 } });
    expect((await call(admin('/policies'))).body).toHaveLength(before);
  });

  it('an empty technicalNames deletes every custom policy', async () => {
    const all = await call(admin('/policies/by-technical-names', { technicalNames: '' }), { method: 'DELETE' });
    expect(all).toMatchObject({ status: 200, body: { ...jobResponse, deleted: 1 } });
    expect((await call(admin('/policies'))).body).toEqual([]);
  });
});
