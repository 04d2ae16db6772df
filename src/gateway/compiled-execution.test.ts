import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, newFolder } from '../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../test/helpers/service.js';

/**
 * A document runs on graphql-js the first time and compiled (graphql-jit) from the second: the answers
 * must not tell the two apart, data, errors and their extensions alike.
 */
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ GRAPHQL_MAX_RESULT_ITEMS: '15' });
});
afterAll(() => service?.stop());

const post = (query: string, variables: Record<string, unknown> = {}) =>
  call(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminSession}` },
    body: JSON.stringify({ query, variables }),
  });

/** The same request three times: the first on graphql-js, the others compiled. */
async function thrice(query: string, variables: Record<string, unknown> = {}) {
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await post(query, variables));
  const [first, ...compiled] = answers.map(({ status, body }) => ({ status, body: withoutDurations(body) as any }));
  for (const answer of compiled) expect(answer).toEqual(first);
  return first!;
}

/** `duration` is the search's own time, different on every run. */
function withoutDurations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDurations);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'duration').map(([key, v]) => [key, withoutDurations(v)]));
}

describe('compiled execution answers as graphql-js does', () => {
  let folderId: string;
  beforeAll(async () => {
    folderId = (await newFolder(service, 'compiled'))['id'];
    await newFolder(service, 'inner', folderId);
    await newContent(service, { parentId: folderId, fileName: 'a.txt', bytes: 'alpha' });
  });

  const page = `query($id: ID!, $withChildren: Boolean!) {
    folder(repository: "default", id: $id) {
      id name createdAt tags properties
      children { count entries {
        __typename id name parent { id name }
        ... on Content { version versionStatus lockedBy resource { name fileSize md5 created resourceSource { type path } } predecessor { id } }
        ... on Folder { children @include(if: $withChildren) { count entries { id } } }
      } }
    }
  }`;

  it('a folder page with its interface entries, nested objects, scalars and @include', async () => {
    const withChildren = await thrice(page, { id: folderId, withChildren: true });
    expect(withChildren.status).toBe(200);
    const entries = withChildren.body.data.folder.children.entries;
    expect(entries.map((e: { __typename: string }) => e.__typename).sort()).toEqual(['Content', 'Folder']);
    expect(entries.find((e: { __typename: string }) => e.__typename === 'Content').resource).toMatchObject({ name: 'a.txt', fileSize: 5 });
    expect(entries.find((e: { __typename: string }) => e.__typename === 'Folder').children).toEqual({ count: 0, entries: [] });
    const without = await thrice(page, { id: folderId, withChildren: false });
    expect(without.body.data.folder.children.entries.find((e: { __typename: string }) => e.__typename === 'Folder')).not.toHaveProperty('children');
    // a non-null variable with a default, omitted: the default applies (as the REST documents declare $withChildren)
    const byDefault = await thrice(page.replace('$withChildren: Boolean!', '$withChildren: Boolean! = false'), { id: folderId });
    expect(byDefault).toEqual(without);
  });

  it('a domain error with its reason code, status and path', async () => {
    const missing = await thrice(page, { id: 'no-such-folder', withChildren: false });
    expect(missing.body.data).toBeNull();
    expect(missing.body.errors).toEqual([
      expect.objectContaining({ path: ['folder'], extensions: expect.objectContaining({ reasonCode: 'notFound', status: 404 }) }),
    ]);
  });

  it('bad variables, and the result budget cutting a list off', async () => {
    const badVariable = await thrice(page, { id: folderId, withChildren: 'yes' });
    expect(badVariable.status).toBe(400);
    expect(badVariable.body.errors[0].message).toMatch(/withChildren/);
    // 10 copies of the folder's two entries: 20 list items over a budget of 15
    const lists = Array.from({ length: 10 }, (_, i) => `l${i}: folder(repository: "default", id: $id) { children { entries { id } } }`).join(' ');
    // which list overdraws depends on the order the children resolve in, which the engines do not share
    for (let i = 0; i < 3; i++) {
      const overBudget = await post(`query($id: ID!) { ${lists} }`, { id: folderId });
      expect(overBudget.body.errors).toEqual([
        expect.objectContaining({ path: [expect.stringMatching(/^l\d+$/), 'children', 'entries'], extensions: expect.objectContaining({ code: 'RESULT_TOO_LARGE', status: 413 }) }),
      ]);
    }
  });
});
