import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetContentDocument, GetFolderDocument } from '../../rest-compat/operations/documents.generated.js';
import { contentDomain, route } from '../../rest-compat/route.js';
import { byId, entryReply } from '../../rest-compat/routes/results.js';
import { contentSchema, folderSchema } from '../../rest-compat/shapes/schemas.js';
import { contentUrl, newContent, newFolder, sql, succeeded } from '../helpers/entries.js';
import { referencePrefix, startBesideReference } from '../helpers/reference.js';
import { call, type TestService } from '../helpers/service.js';

/*
 * The hot reads (GET C/folder/{id}, GET C/content/{id}) call the entries' read verb directly instead
 * of their GraphQL documents (docs/api.md, "Hot reads"). Here each answer is held to the answer of
 * the path it replaced, served beside it by the same service under `/reference/api/v1`: the same
 * router, its table's rows running get-folder.graphql and get-content.graphql through the gateway —
 * the same status and the same JSON, byte for byte, over a matrix of entries and callers.
 */

/** The two rows as they were before the hot reads. */
const documentRows = [
  route({ method: 'GET', path: `${contentDomain}/folder/:id`, summary: 'A folder', responses: { 200: folderSchema }, document: GetFolderDocument, variables: byId, reply: entryReply }),
  route({ method: 'GET', path: `${contentDomain}/content/:id`, summary: 'A content', responses: { 200: contentSchema }, document: GetContentDocument, variables: byId, reply: entryReply }),
];

let service: TestService;
let sessions: Record<string, string>;
let ids: Record<string, string>;

/** `{prefix}/access.svc.content.<repository>/v1/<kind>/<id>`, with the session as `sessionId` (none: no session at all). */
function readPath(prefix: string, repository: string, kind: 'folder' | 'content', id: string, session: string | undefined): string {
  const query = session === undefined ? '' : `?sessionId=${encodeURIComponent(session)}`;
  return `${service.baseUrl}${prefix}/access.svc.content.${encodeURIComponent(repository)}/v1/${kind}/${encodeURIComponent(id)}${query}`;
}

/** The hot read's answer (checked against the OpenAPI document: `call`), its JSON as text again (keys in their order). */
async function hotAnswer(repository: string, kind: 'folder' | 'content', id: string, session: string | undefined) {
  const { status, body } = await call(readPath('/api/v1', repository, kind, id, session));
  return { status, text: JSON.stringify(body) };
}

/** The answer of the document path it replaced. */
async function documentAnswer(repository: string, kind: 'folder' | 'content', id: string, session: string | undefined) {
  const response = await fetch(readPath(referencePrefix, repository, kind, id, session));
  return { status: response.status, text: JSON.stringify(await response.json()) };
}

beforeAll(async () => {
  ({ service, sessions, ids } = await startBesideReference(documentRows));

  // checked out now: the working copy and the version it was made from
  const draft = await newContent(service, { name: 'draft.txt', parentId: ids.inner });
  ids.draft = draft.id;
  ids.draftCopy = (await succeeded(service, 'POST', `/content/${draft.id}/check-out`)).id;

  // the reader may read the content but not its folder: no parent in its answers
  ids.hidden = (await newContent(service, { name: 'hidden-parent.txt', parentId: ids.secret })).id;
  await succeeded(service, 'PUT', `/content/${ids.hidden}/acl`, { entries: [{ principal: 'reader', permission: 'read' }] });

  // deactivated (its metadata stays readable) and gone
  ids.deleted = (await newContent(service, { name: 'deleted.txt' })).id;
  await succeeded(service, 'DELETE', `/content/${ids.deleted}`);
  ids.purgedFolder = (await newFolder(service, 'purged')).id;
  await succeeded(service, 'DELETE', `/folder/${ids.purgedFolder}`);

  // another repository's folder and content
  const other = await service.graphql('mutation { createRepository(input: { name: "other" }) { id } }');
  expect(other.errors).toBeUndefined();
  const otherBase = `${service.baseUrl}/api/v1/access.svc.content.other/v1`;
  ids.otherFolder = (await newFolder(service, 'elsewhere', undefined, undefined, otherBase)).id;
  ids.otherContent = (await newContent(service, { name: 'elsewhere.txt', parentId: ids.otherFolder, base: otherBase })).id;

  // a session past its expiry (never used before, so no process holds it)
  sessions.expired = await service.createUserSession('expired');
  await sql(service, `update user_session set expires_at = now() - interval '1 second' where user_name = 'expired'`);
}, 120_000);
afterAll(() => service?.stop());

/** [what, repository, path kind, id (a key of `ids` or itself), caller (a key of `sessions`, or none), the status both answer] */
type Case = [string, string, 'folder' | 'content', string, string | undefined, number];
const cases: Case[] = [
  ['a folder at the root', 'default', 'folder', 'team', 'admin', 200],
  ['a folder in a folder', 'default', 'folder', 'inner', 'admin', 200],
  ['a content with tags, properties, a predecessor and a lock', 'default', 'content', 'planV2', 'admin', 200],
  ['an earlier version', 'default', 'content', 'planV1', 'admin', 200],
  ['a checked-out content', 'default', 'content', 'draft', 'admin', 200],
  ['its working copy', 'default', 'content', 'draftCopy', 'admin', 200],
  ['a deactivated content', 'default', 'content', 'deleted', 'admin', 200],
  ['a deleted folder', 'default', 'folder', 'purgedFolder', 'admin', 404],
  ['a content on the folder path', 'default', 'folder', 'planV2', 'admin', 404],
  ['a folder on the content path', 'default', 'content', 'team', 'admin', 404],
  ["another repository's folder", 'default', 'folder', 'otherFolder', 'admin', 404],
  ["another repository's content", 'default', 'content', 'otherContent', 'admin', 404],
  ['a folder of that repository, there', 'other', 'folder', 'otherFolder', 'admin', 200],
  ['a content of that repository, there', 'other', 'content', 'otherContent', 'admin', 200],
  ['an unknown repository', 'nowhere', 'folder', 'team', 'admin', 404],
  ['an unknown id', 'default', 'content', '3f2b8c1e-0000-4000-8000-000000000000', 'admin', 404],
  ['an id that is no uuid', 'default', 'folder', 'not an id', 'admin', 404],
  ['an id with a NUL', 'default', 'content', 'a\u0000b', 'admin', 400],
  ['a very long id', 'default', 'content', 'x'.repeat(2000), 'admin', 404],
  ['no session', 'default', 'folder', 'team', undefined, 401],
  ['an unknown session', 'default', 'folder', 'team', 'no-such-session', 401],
  ['an expired session', 'default', 'content', 'planV2', 'expired', 401],
  ['a user who may not read the folder', 'default', 'folder', 'team', 'outsider', 404],
  ['a user who may not read the content', 'default', 'content', 'planV2', 'outsider', 404],
  ['a user who may read the folder', 'default', 'folder', 'inner', 'reader', 200],
  ['a user who may read the content', 'default', 'content', 'planV2', 'reader', 200],
  ['a user who may read the content but not its folder', 'default', 'content', 'hidden', 'reader', 200],
  ['a user who may read the working copy', 'default', 'content', 'draftCopy', 'reader', 200],
  ['a user who may not read the secret folder', 'default', 'folder', 'secret', 'reader', 404],
];

describe('the hot reads answer as their GraphQL documents did', () => {
  it.each(cases)('%s', async (_what, repository, kind, key, caller, status) => {
    const id = ids[key] ?? key;
    const session = caller === undefined ? undefined : (sessions[caller] ?? caller);
    // the expired session is ended by the first look at it: both answers see it so
    const fast = await hotAnswer(repository, kind, id, session);
    const reference = await documentAnswer(repository, kind, id, session);
    expect(fast.status).toBe(status);
    expect(fast).toEqual(reference);
  });

  it('answers what the matrix means to show', async () => {
    const get = async (kind: string, key: string, session = service.adminSession) => (await call(contentUrl(service, `/${kind}/${ids[key]}`, {}, session))).body;
    expect(await get('content', 'planV2')).toMatchObject({
      version: '2.0',
      tags: ['a', 'b'],
      properties: { k: 'v', n: 1 },
      lockedBy: 'admin',
      parent: { id: ids.team, _type: 'svc.model.content.Folder' },
      predecessor: { id: ids.planV1, version: '1.0', parent: { id: ids.team } },
      resource: { _type: 'com.svc.model.resource.Resource', mimeType: 'text/plain' },
    });
    expect(await get('content', 'draftCopy')).toMatchObject({ versionStatus: 'WORKING_COPY', predecessor: { id: ids.draft } });
    expect(await get('content', 'deleted')).toMatchObject({ active: false });
    expect(await get('folder', 'inner')).toMatchObject({ parent: { id: ids.team } });
    const hidden = await get('content', 'hidden', sessions.reader);
    expect(hidden.id).toBe(ids.hidden);
    expect(hidden.parent).toBeUndefined();
  });
});
