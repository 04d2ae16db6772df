import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restDatePattern } from '../../../test/helpers/entries.js';
import { adminUrl, call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// Groups over the public surfaces (DESIGN §10): REST `A/group…` as the design writes it, GraphQL through the gateway.
let service: TestService;
let userSession: string;

/** `A/<path>` with query parameters, as the administrator unless a session (or null: none) is given. */
const admin = (path: string, query?: Record<string, string>, session?: string | null) => adminUrl(service, path, query, session);
const error = (status: number, reasonCode: string, message: string | RegExp) => ({
  status,
  body: { _type: 'svc.model.error.ErrorResponse', status, reasonCode, message: typeof message === 'string' ? message : expect.stringMatching(message) },
});
const del = { method: 'DELETE' };
const post = { method: 'POST' };

beforeAll(async () => {
  service = await startTestService();
  userSession = await service.createUserSession('carol');
  await service.createUserSession('Dave');
});
afterAll(() => service?.stop());

describe('REST: A/group, A/groups, A/group/members', () => {
  it('POST A/group creates a group (201), GET A/groups lists it, DELETE A/group deletes it (204)', async () => {
    const created = await call(admin('/group'), json('POST', { name: 'Editors' }));
    expect(created).toEqual({
      status: 201,
      headers: expect.anything(),
      body: { name: 'Editors', members: [], createdAt: expect.stringMatching(restDatePattern), createdBy: 'admin' },
    });
    await call(admin('/group'), json('POST', { name: 'authors' }));
    const listed = await call(admin('/groups'));
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ name: 'authors', members: [], createdAt: expect.stringMatching(restDatePattern), createdBy: 'admin' }, created.body]);
    expect((await call(admin('/group', { name: 'AUTHORS' }), del)).status).toBe(204);
    expect((await call(admin('/groups'))).body.map((group: { name: string }) => group.name)).toEqual(['Editors']);
  });

  it('answers 409 for a name taken in any case, 404 for an unknown group, 400 naming what is malformed', async () => {
    expect(await call(admin('/group'), json('POST', { name: 'editors' }))).toMatchObject(error(409, 'conflict', "group 'editors' exists"));
    expect(await call(admin('/group', { name: 'nobody-group' }), del)).toMatchObject(error(404, 'notFound', "group 'nobody-group' not found"));
    expect(await call(admin('/group'), json('POST', { name: 'everyone' }))).toMatchObject(error(400, 'illegalArguments', /^name: must not be 'EVERYONE'/));
    expect(await call(admin('/group'), json('POST', { name: 'two words' }))).toMatchObject(error(400, 'illegalArguments', /^name: 1 to 64 letters/));
    expect(await call(admin('/group'), json('POST', {}))).toMatchObject(error(400, 'illegalArguments', 'invalid body: name is required'));
    expect(await call(admin('/group'), json('POST', { name: 7 }))).toMatchObject(error(400, 'illegalArguments', /^invalid body: name /));
    expect(await call(admin('/group'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' })).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    expect(await call(admin('/group'), del)).toMatchObject(error(400, 'illegalArguments', 'invalid parameter: name is required'));
  });

  it('POST A/group/members adds a member (200 with the group), DELETE removes one (204)', async () => {
    const added = await call(admin('/group/members', { name: 'EDITORS', userName: 'dave' }), post);
    expect(added).toMatchObject({ status: 200, body: { name: 'Editors', members: ['Dave'], createdBy: 'admin', createdAt: expect.stringMatching(restDatePattern) } });
    expect((await call(admin('/group/members', { name: 'editors', userName: 'carol' }), post)).body.members).toEqual(['carol', 'Dave']);
    expect(await call(admin('/group/members', { name: 'editors', userName: 'DAVE' }), post)).toMatchObject(error(409, 'conflict', "user 'Dave' is a member of group 'Editors' already"));
    expect((await call(admin('/group/members', { name: 'editors', userName: 'dave' }), del)).status).toBe(204);
    expect(await call(admin('/group/members', { name: 'editors', userName: 'dave' }), del)).toMatchObject(error(404, 'notFound', "user 'Dave' is not a member of group 'Editors'"));
    expect((await call(admin('/groups'))).body[0].members).toEqual(['carol']);
  });

  it('names the unknown group or user (404) and the missing or malformed parameter (400)', async () => {
    for (const init of [post, del]) {
      expect(await call(admin('/group/members', { name: 'nobody-group', userName: 'carol' }), init)).toMatchObject(error(404, 'notFound', "group 'nobody-group' not found"));
      expect(await call(admin('/group/members', { name: 'editors', userName: 'nobody' }), init)).toMatchObject(error(404, 'notFound', "user 'nobody' not found"));
      expect(await call(admin('/group/members', { name: 'editors' }), init)).toMatchObject(error(400, 'illegalArguments', 'invalid parameter: userName is required'));
      expect(await call(admin('/group/members', { userName: 'carol' }), init)).toMatchObject(error(400, 'illegalArguments', 'invalid parameter: name is required'));
      expect(await call(admin('/group/members', { name: 'editors', userName: 'no body' }), init)).toMatchObject(error(400, 'illegalArguments', /^userName: /));
    }
  });

  it('keeps every group route to administrators: 403 for a user, 401 without a session', async () => {
    const routes: [string, Record<string, string>, RequestInit][] = [
      ['/group', {}, json('POST', { name: 'mine' })],
      ['/groups', {}, {}],
      ['/group', { name: 'editors' }, del],
      ['/group/members', { name: 'editors', userName: 'carol' }, post],
      ['/group/members', { name: 'editors', userName: 'carol' }, del],
    ];
    for (const [path, query, init] of routes) {
      expect({ path, init: init.method, answer: await call(admin(path, query, userSession), init) }).toMatchObject({ path, answer: { status: 403, body: { reasonCode: 'accessDenied' } } });
      expect({ path, init: init.method, answer: await call(admin(path, query, null), init) }).toMatchObject({ path, answer: { status: 401, body: { reasonCode: 'notAuthenticated' } } });
    }
    expect((await call(admin('/groups'))).body).toEqual([expect.objectContaining({ name: 'Editors', members: ['carol'] })]);
  });
});

describe('GraphQL: groups, createGroup, deleteGroup, addGroupMember, removeGroupMember', () => {
  const fields = 'name members createdAt createdBy';

  it('does what REST does, and the member sees the group in `me`', async () => {
    const created = await service.graphql<{ createGroup: { name: string; members: string[]; createdAt: string; createdBy: string } }>(`mutation { createGroup(name: "Reviewers") { ${fields} } }`);
    expect(created.data?.createGroup).toEqual({ name: 'Reviewers', members: [], createdAt: expect.any(String), createdBy: 'admin' });
    const added = await service.graphql(`mutation { addGroupMember(name: "reviewers", userName: "CAROL") { name members } }`);
    expect(added.data).toEqual({ addGroupMember: { name: 'Reviewers', members: ['carol'] } });
    expect((await service.graphql('{ me { userName groups } }', {}, userSession)).data).toEqual({ me: { userName: 'carol', groups: ['Editors', 'Reviewers'] } });
    const listed = await service.graphql<{ groups: { name: string; members: string[] }[] }>('{ groups { name members } }');
    expect(listed.data?.groups).toEqual([
      { name: 'Editors', members: ['carol'] },
      { name: 'Reviewers', members: ['carol'] },
    ]);
    const removed = await service.graphql('mutation { removeGroupMember(name: "Reviewers", userName: "carol") { members } }');
    expect(removed.data).toEqual({ removeGroupMember: { members: [] } });
    expect((await service.graphql('mutation { deleteGroup(name: "REVIEWERS") }')).data).toEqual({ deleteGroup: true });
    expect((await service.graphql('{ me { groups } }', {}, userSession)).data).toEqual({ me: { groups: ['Editors'] } });
  });

  it('answers the same errors: 409, 404, 400 naming the field', async () => {
    const reasons = async (query: string) => (await service.graphql(query)).errors?.[0];
    expect(await reasons('mutation { createGroup(name: "EDITORS") { name } }')).toMatchObject({ message: "group 'EDITORS' exists", extensions: { reasonCode: 'conflict', status: 409 } });
    expect(await reasons('mutation { createGroup(name: "Everyone") { name } }')).toMatchObject({ message: expect.stringMatching(/^name: /), extensions: { reasonCode: 'illegalArguments', status: 400 } });
    expect(await reasons('mutation { deleteGroup(name: "gone") }')).toMatchObject({ extensions: { reasonCode: 'notFound', status: 404 } });
    expect(await reasons('mutation { addGroupMember(name: "editors", userName: "nobody") { name } }')).toMatchObject({ message: "user 'nobody' not found", extensions: { reasonCode: 'notFound' } });
    expect(await reasons('mutation { removeGroupMember(name: "editors", userName: "dave") { name } }')).toMatchObject({ extensions: { reasonCode: 'notFound', status: 404 } });
  });

  it('keeps every group field to administrators (403 for a user)', async () => {
    for (const query of [
      '{ groups { name } }',
      'mutation { createGroup(name: "mine") { name } }',
      'mutation { deleteGroup(name: "editors") }',
      'mutation { addGroupMember(name: "editors", userName: "carol") { name } }',
      'mutation { removeGroupMember(name: "editors", userName: "carol") { name } }',
    ]) {
      const result = await service.graphql(query, {}, userSession);
      expect({ query, extensions: result.errors?.[0]?.extensions }).toMatchObject({ query, extensions: { reasonCode: 'accessDenied', status: 403 } });
    }
    expect((await service.graphql<{ groups: { members: string[] }[] }>('{ groups { members } }')).data?.groups).toEqual([{ members: ['carol'] }]);
  });
});
