import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchByConditionDocument, SearchByPropertiesDocument, SearchByTextDocument } from '../../rest-compat/operations/documents.generated.js';
import { fieldsOf } from '../../rest-compat/inputs.js';
import { nonEmptyText, searchPageParameters, withChildren } from '../../rest-compat/params.js';
import { contentDomain, route } from '../../rest-compat/route.js';
import { pageReply } from '../../rest-compat/routes/results.js';
import { entriesResponseSchema } from '../../rest-compat/shapes/schemas.js';
import { z } from 'zod';
import { newContent, succeeded } from '../helpers/entries.js';
import { referencePrefix, startBesideReference } from '../helpers/reference.js';
import { call, type TestService } from '../helpers/service.js';

/*
 * The three searches over REST call their verbs directly and shape the page as their GraphQL documents
 * do (rest-compat/routes/search.ts, directRoute; src/modules/search/page-view.ts). Here each answer is
 * held to the answer of the document path, served beside it by the same service under
 * `/reference/api/v1` (the rows as they were before, running search-by-*.graphql through the gateway):
 * the same status and the same JSON, byte for byte but `duration`, over a matrix of searches and callers.
 */

/** The three rows as they were before the direct searches. */
const documentRows = [
  route({
    method: 'GET',
    path: `${contentDomain}/content/search`,
    summary: 'Search by properties',
    request: (inputs) => ({ query: inputs.text('PropertyFilter').extend(searchPageParameters(inputs).shape), filter: inputs.text('PropertyFilter'), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByPropertiesDocument,
    variables: ({ params, query }, { filter, options }) => ({ repository: params.repository!, filter: fieldsOf(query, filter), options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-condition`,
    summary: 'Search by a condition',
    request: (inputs) => ({ query: z.object({ condition: nonEmptyText }).extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByConditionDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, condition: query.condition, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-text`,
    summary: 'Full-text search',
    request: (inputs) => ({ query: z.object({ searchText: nonEmptyText }).extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByTextDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, searchText: query.searchText, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
];

let service: TestService;
let sessions: Record<string, string>;
let ids: Record<string, string>;

type Query = Record<string, string | number | string[]>;

/** `{prefix}/access.svc.content.<repository>/v1/content/search<kind>?…`, ids named by `@key` resolved. */
function searchPath(prefix: string, repository: string, kind: string, query: Query, session: string | undefined): string {
  const params = new URLSearchParams(session === undefined ? {} : { sessionId: session });
  for (const [key, value] of Object.entries(query)) for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item).replace(/^@(\w+)$/, (_, name: string) => ids[name]!));
  return `${service.baseUrl}${prefix}/access.svc.content.${encodeURIComponent(repository)}/v1/content/search${kind}?${params}`;
}

/** An answer's status and JSON as text (keys in their order), without the `duration` each search measures anew. */
async function answer(prefix: string, repository: string, kind: string, query: Query, session: string | undefined) {
  const response = await fetch(searchPath(prefix, repository, kind, query, session));
  const body = (await response.json()) as Record<string, unknown>;
  if (typeof body.duration === 'number') body.duration = 0;
  return { status: response.status, text: JSON.stringify(body) };
}

beforeAll(async () => {
  ({ service, sessions, ids } = await startBesideReference(documentRows));
  // checked out now: the working copy beside the version
  ids.draft = (await newContent(service, { name: 'draft plan.txt', parentId: ids.inner, tags: ['a'] })).id;
  ids.draftCopy = (await succeeded(service, 'POST', `/content/${ids.draft}/check-out`)).id;
  // the reader may read the content but not its folder: no parent in its answers
  ids.hidden = (await newContent(service, { name: 'hidden-parent.txt', parentId: ids.secret, tags: ['b'] })).id;
  await succeeded(service, 'PUT', `/content/${ids.hidden}/acl`, { entries: [{ principal: 'reader', permission: 'read' }] });
  // deactivated
  ids.deleted = (await newContent(service, { name: 'deleted plan.txt', parentId: ids.team })).id;
  await succeeded(service, 'DELETE', `/content/${ids.deleted}`);
  await newContent(service, { name: 'root.md', tags: ['a'], properties: { n: 2 } });
}, 120_000);
afterAll(() => service?.stop());

/** [what, search path after /content/search, query, caller (a key of `sessions`, or none), the status both answer] */
type Case = [string, string, Query, string | undefined, number];
const searches: [string, string, Query, number][] = [
  ['everything', '', {}, 200],
  ['a folder', '', { parentId: '@team' }, 200],
  ['a folder and a tag', '', { parentId: '@team', tags: 'a' }, 200],
  ['tags', '', { tags: ['a', 'b'] }, 200],
  ['every version of a chronicle', '', { chronicalId: '@planV1', includeVersions: 'true', orderBy: 'version' }, 200],
  ['working copies', '', { versionStatus: 'WORKING_COPY' }, 200],
  ['folders, ordered and paged', '', { entryType: 'FOLDER', orderBy: 'name', orderingDirection: 'desc', limit: 2, offset: 1 }, 200],
  ['a count past the page', '', { limit: 1 }, 200],
  ['a projection', '', { includeProperties: ['name', 'parent', 'predecessor'] }, 200],
  ['an exclusion', '', { excludeProperties: 'resource', autoExclude: 'true' }, 200],
  ['the folders with their children (the document runs)', '', { entryType: 'FOLDER', includeProperties: ['name', 'children'] }, 200],
  ['a limit too large', '', { limit: 5000 }, 400],
  ['an order by tags', '', { orderBy: 'tags' }, 400],
  ['a condition', '/by-condition', { condition: "name like '*plan*'" }, 200],
  ['a dot path', '/by-condition', { condition: "parent.name = 'team'" }, 200],
  ['a predecessor', '/by-condition', { condition: "predecessor.version = '1.0'" }, 200],
  ['deactivated entries', '/by-condition', { condition: 'active = false' }, 200],
  ['working copies by condition', '/by-condition', { condition: "versionStatus = 'WORKING_COPY' or 'b' in tags" }, 200],
  ['fullText()', '/by-condition', { condition: "fullText('plan') and owner = 'admin'", orderBy: 'name' }, 200],
  ['a bad condition', '/by-condition', { condition: 'name = ' }, 400],
  ['a word', '/by-text', { searchText: 'plan' }, 200],
  ['a word, newest first', '/by-text', { searchText: 'plan', orderingDirection: 'desc', limit: 1 }, 200],
  ['no match', '/by-text', { searchText: 'nothing-like-this' }, 200],
];
const cases: Case[] = [
  ...searches.flatMap(([what, kind, query, status]): Case[] => ['admin', 'reader', 'outsider'].map((caller): Case => [`${what} (${caller})`, kind, query, caller, status])),
  ['no session', '', {}, undefined, 401],
  ['an unknown session', '/by-text', { searchText: 'plan' }, 'no-such-session', 401],
];

describe('the searches answer as their GraphQL documents did', () => {
  it.each(cases)('%s', async (_what, kind, query, caller, status) => {
    const session = caller === undefined ? undefined : (sessions[caller] ?? caller);
    const direct = await answer('/api/v1', 'default', kind, query, session);
    const reference = await answer(referencePrefix, 'default', kind, query, session);
    expect(direct.status).toBe(status);
    expect(direct).toEqual(reference);
  });

  it('an unknown repository is a 404 on both paths', async () => {
    const direct = await answer('/api/v1', 'nowhere', '', {}, sessions.admin);
    expect(direct.status).toBe(404);
    expect(direct).toEqual(await answer(referencePrefix, 'nowhere', '', {}, sessions.admin));
  });

  it('answers what the matrix means to show', async () => {
    const { body } = await call(searchPath('/api/v1', 'default', '', { chronicalId: '@planV1', includeVersions: 'true', orderBy: 'version' }, sessions.reader));
    expect(body.entries).toMatchObject([
      { id: ids.planV1, version: '1.0', parent: { id: ids.team } },
      { id: ids.planV2, version: '2.0', lockedBy: 'admin', predecessor: { id: ids.planV1, parent: { id: ids.team }, resource: { mimeType: 'text/plain' } } },
    ]);
    const hidden = (await call(searchPath('/api/v1', 'default', '', { tags: 'b' }, sessions.reader))).body.entries;
    expect(hidden.find((e: { id: string }) => e.id === ids.hidden)).toMatchObject({ id: ids.hidden });
    expect(hidden.find((e: { id: string }) => e.id === ids.hidden).parent).toBeUndefined();
    const folders = (await call(searchPath('/api/v1', 'default', '', { entryType: 'FOLDER', includeProperties: ['name', 'children'] }, sessions.admin))).body.entries;
    expect(folders.find((e: { id: string }) => e.id === ids.team).children.map((c: { name: string }) => c.name)).toEqual(['inner', 'plan.txt']);
  });
});
