import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newFolder, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// A client that knows only the spec, on a fresh installation: no type is registered (the spec has no
// type registry), and policies name the types its contents carry (docs/administration.md).
let service: TestService;
const repositoryId = 'svc.repository.default';

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const admin = (path: string, query: Record<string, string> = {}) => `${service.adminBase}${path}?${new URLSearchParams({ ...query, sessionId: service.adminSession })}`;
/** Spec endpoints 6–8: `POST A/policy/…?sessionId=` with form fields, lists as repeated fields. */
const createPolicy = (kind: string, fields: [string, string][]) => call(admin(`/policy/${kind}`), { method: 'POST', body: new URLSearchParams(fields) });
async function policy(kind: string, fields: [string, string][]): Promise<Record<string, any>> {
  const created = await createPolicy(kind, fields);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}
const assign = async (policyId: string, folderId: string) =>
  expect((await call(admin('/policy/assignment', { policyId, repositoryId, folderId }), { method: 'POST' })).status).toBe(204);
const registerType = async (name: string, parentTypeName?: string) => expect((await call(admin('/type'), json('POST', { name, parentTypeName }))).status).toBe(201);
const uploadStatus = async (parentId: string, name: string, typeName?: string) => (await uploadContent(service, { parentId, name, typeName })).status;

describe('policies name types the registry does not know (a fresh installation has none)', () => {
  it('are created as the spec writes the calls; their type names are checked as a content\'s are', async () => {
    expect((await call(admin('/types'))).body).toEqual([]);
    const defaultType = await createPolicy('default-type', [
      ['name', 'p1'],
      ['defaultTypeName', 'Document'],
    ]);
    expect(defaultType).toMatchObject({ status: 201, body: { technicalName: 'p1', kind: 'DEFAULT_TYPE', fields: { defaultTypeName: 'Document' } } });
    const allowed = await createPolicy('type-restriction', [
      ['name', 'r1'],
      ['description', 'documents and memos'],
      ['allowedTypeNames', 'Document'],
      ['allowedTypeNames', 'Memo'],
      ['includeSubTypes', 'true'],
    ]);
    expect(allowed).toMatchObject({ status: 201, body: { kind: 'TYPE_RESTRICTION', fields: { allowedTypeNames: ['Document', 'Memo'], deniedTypeNames: [], includeSubTypes: true } } });
    const denied = await createPolicy('type-restriction', [
      ['name', 'r2'],
      ['deniedTypeNames', 'Secret'],
      ['deniedTypeNames', 'Draft'],
    ]);
    expect(denied).toMatchObject({ status: 201, body: { fields: { deniedTypeNames: ['Secret', 'Draft'], includeSubTypes: true } } });
    // through GraphQL the same
    const viaGraphql = await service.graphql<{ createDefaultTypePolicy: { fields: unknown } }>(
      'mutation { createDefaultTypePolicy(input: { name: "p2", defaultTypeName: "Letter" }) { fields } }',
    );
    expect(viaGraphql.data?.createDefaultTypePolicy.fields).toEqual({ defaultTypeName: 'Letter' });
    // nothing was registered on the way
    expect((await call(admin('/types'))).body).toEqual([]);

    for (const [kind, fields, message] of [
      ['default-type', [['name', 'bad1'], ['defaultTypeName', '']], 'defaultTypeName: a type name is required'],
      ['default-type', [['name', 'bad2'], ['defaultTypeName', 'a\u0001b']], 'defaultTypeName must not contain'],
      ['type-restriction', [['name', 'bad3'], ['deniedTypeNames', 'x'.repeat(129)]], 'deniedTypeNames is longer than 128 characters'],
      ['type-restriction', [['name', 'bad4'], ['allowedTypeNames', 'ok'], ['allowedTypeNames', '\u202eevil']], 'allowedTypeNames must not contain'],
    ] as [string, [string, string][], string][]) {
      const refused = await createPolicy(kind, fields);
      expect(refused, message).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining(message) } });
    }
  });

  it('take effect by name while unregistered, and with subtypes from the registry as it is when the rule is checked', async () => {
    const policies = (await call(admin('/policies'))).body as { id: string; technicalName: string }[];
    const id = (technicalName: string) => policies.find((p) => p.technicalName === technicalName)!.id;

    const closed = await newFolder(service, 'closed');
    await assign(id('p1'), closed.id);
    await assign(id('r2'), closed.id);
    const untyped = await uploadContent(service, { parentId: closed.id, name: 'untyped.txt' });
    expect(untyped).toMatchObject({ status: 201, body: { typeName: 'Document' } });
    const secret = await uploadContent(service, { parentId: closed.id, name: 'secret.txt', typeName: 'Secret' });
    expect(secret).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: "type 'Secret' is denied in folder 'closed'" } });
    // not a subtype of Secret until the registry says so
    expect(await uploadStatus(closed.id, 'top-1.txt', 'TopSecret')).toBe(201);
    await registerType('Secret');
    await registerType('TopSecret', 'Secret');
    expect(await uploadStatus(closed.id, 'top-2.txt', 'TopSecret')).toBe(409);

    const open = await newFolder(service, 'documents-and-memos');
    await assign(id('r1'), open.id);
    expect(await uploadStatus(open.id, 'doc.txt', 'Document')).toBe(201);
    expect(await uploadStatus(open.id, 'memo.txt', 'Memo')).toBe(201);
    expect(await uploadStatus(open.id, 'note-1.txt', 'Note')).toBe(409);
    expect(await uploadStatus(open.id, 'untyped.txt')).toBe(409);
    await registerType('Memo');
    await registerType('Note', 'Memo');
    expect(await uploadStatus(open.id, 'note-2.txt', 'Note')).toBe(201);

    // without includeSubTypes only the named type, registered subtypes or not
    const memosOnly = await policy('type-restriction', [
      ['name', 'memos-only'],
      ['allowedTypeNames', 'Memo'],
      ['includeSubTypes', 'false'],
    ]);
    const strict = await newFolder(service, 'memos-only');
    await assign(memosOnly.id, strict.id);
    expect(await uploadStatus(strict.id, 'memo.txt', 'Memo')).toBe(201);
    expect(await uploadStatus(strict.id, 'note.txt', 'Note')).toBe(409);
  });
});
