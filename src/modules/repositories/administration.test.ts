import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { administrator, createOperationsBench } from '../../../test/helpers/operations.js';
import { createUser, deleteUser } from '../auth/operations.js';
import { adminUrl, call, json, startTestService, type TestService } from '../../../test/helpers/service.js';
import { restDatePattern } from '../../../test/helpers/entries.js';

let service: TestService;
let userSession: string;

/** `A/<path>` with query parameters, as the administrator unless a session (or null: none) is given. */
const admin = (path: string, query?: Record<string, string>, session?: string | null) => adminUrl(service, path, query, session);

beforeAll(async () => {
  service = await startTestService({ CONV_MAX_INPUT_FILE_SIZE: '1000000', CONV_MAX_NUMBER_OF_INPUT_FILES: '10' });
  userSession = await service.createUserSession('carol');
});
afterAll(() => service?.stop());

describe('repositories (DESIGN §4)', () => {
  it('POST A/repository creates one with id svc.repository.<name>, limits and flags; GET lists and finds it by name', async () => {
    const created = await call(
      admin('/repository'),
      json('POST', { name: 'archive', technicalName: 'archive_tech', fullTextEnabled: false, limits: { maxInputFileSize: 1000, conversionLimit: 'LOW' } }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'svc.repository.archive',
      name: 'archive',
      technicalName: 'archive_tech',
      fullTextEnabled: false,
      limits: { maxInputFileSize: 1000, conversionLimit: 'LOW', maxNumberOfInputFiles: null },
      createdBy: 'admin',
      createdAt: expect.stringMatching(restDatePattern),
      modifiedAt: expect.stringMatching(restDatePattern),
    });
    const list = await call(admin('/repositories'));
    expect(list.status).toBe(200);
    expect(list.body.map((r: { id: string }) => r.id)).toEqual(['svc.repository.archive', 'svc.repository.default']);
    const found = await call(admin('/repository/by-name', { repositoryName: 'archive' }));
    expect(found).toMatchObject({ status: 200, body: { id: 'svc.repository.archive', technicalName: 'archive_tech' } });
    // the new repository's content domain answers at once
    expect((await call(`${service.baseUrl}/api/v1/access.svc.content.archive/v1/home?sessionId=${service.adminSession}`)).status).toBe(200);
  });

  it('refuses a duplicate name (409), a bad name (400) and a limit above the conversion limit (400)', async () => {
    expect((await call(admin('/repository'), json('POST', { name: 'archive' }))).status).toBe(409);
    // whatever their case: r1 and R1 would be two content domains told apart by case only
    expect(await call(admin('/repository'), json('POST', { name: 'ARCHIVE' }))).toMatchObject({ status: 409, body: { message: expect.stringContaining('whatever their case') } });
    expect((await call(admin('/repository'), json('POST', { name: 'other-case', technicalName: 'Archive_Tech' }))).status).toBe(409);
    const badName = await call(admin('/repository'), json('POST', { name: 'no spaces' }));
    expect(badName).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    const above = await call(admin('/repository'), json('POST', { name: 'big', limits: { maxInputFileSize: 1000001 } }));
    expect(above.status).toBe(400);
    expect(above.body.message).toContain('CONV_MAX_INPUT_FILE_SIZE');
    const unknownField = await call(admin('/repository'), json('POST', { name: 'x', limits: { conversionLimit: 'HUGE' } }));
    expect(unknownField.status).toBe(400);
  });

  it('refuses limits that are not whole numbers above 0 (400), at creation and in PATCH; a taken technical name is a 409 that says so', async () => {
    for (const limits of [{ maxInputFileSize: -1 }, { maxInputFileSize: 0 }, { maxTotalInputFileSize: 1.5 }, { maxNumberOfInputFiles: 0 }]) {
      const created = await call(admin('/repository'), json('POST', { name: 'odd', limits }));
      expect(created, JSON.stringify(limits)).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining('whole number above 0') } });
      const patched = await call(admin('/repository/limits', { repositoryId: 'svc.repository.default' }), json('PATCH', limits));
      expect(patched.status, JSON.stringify(limits)).toBe(400);
    }
    // a whole number too large to be one exactly says it is above the limit
    // the total for all files of a conversion below the size of one file
    const below = await call(admin('/repository/limits', { repositoryId: 'svc.repository.default' }), json('PATCH', { maxInputFileSize: 1000, maxTotalInputFileSize: 100 }));
    expect(below.body).toMatchObject({ status: 400, message: expect.stringContaining('maxTotalInputFileSize: 100 is below maxInputFileSize (1000)') });
    const huge = await call(admin('/repository/limits', { repositoryId: 'svc.repository.default' }), json('PATCH', { maxTotalInputFileSize: 1e20 }));
    expect(huge.body).toMatchObject({ status: 400, message: expect.stringMatching(/^maxTotalInputFileSize: 100000000000000000000 is above the conversion limit CONV_MAX_TOTAL_INPUT_FILE_SIZE/) });
    expect((await call(admin('/repository/by-name', { repositoryName: 'odd' }))).status).toBe(404);
    const taken = await call(admin('/repository'), json('POST', { name: 'other', technicalName: 'archive_tech' }));
    expect(taken).toMatchObject({ status: 409, body: { message: expect.stringContaining("technical name 'archive_tech'") } });
  });

  it('PATCH A/repository/limits changes the limits and flags given (null unsets, absent stays); the change is seen at once (the cached record is dropped)', async () => {
    // reading it by name caches the record for a few seconds
    expect((await call(admin('/repository/by-name', { repositoryName: 'archive' }))).body.fullTextEnabled).toBe(false);
    const patched = await call(
      admin('/repository/limits', { repositoryId: 'svc.repository.archive' }),
      json('PATCH', { maxNumberOfInputFiles: 10, maxTotalInputFileSize: 5000, conversionLimit: 'HIGH', conversionStrategy: 'REPLACE', fullTextEnabled: true }),
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      fullTextEnabled: true,
      // maxInputFileSize was not given: it keeps the value set at creation
      limits: { maxNumberOfInputFiles: 10, maxTotalInputFileSize: 5000, conversionLimit: 'HIGH', conversionStrategy: 'REPLACE', maxInputFileSize: 1000 },
    });
    expect((await call(admin('/repository/by-name', { repositoryName: 'archive' }))).body).toMatchObject({ fullTextEnabled: true, limits: { conversionLimit: 'HIGH' } });
    // as a PATCH reads: what is absent stays, null unsets
    const flagOnly = await call(admin('/repository/limits', { repositoryId: 'svc.repository.archive' }), json('PATCH', { fullTextEnabled: false }));
    expect(flagOnly.body).toMatchObject({ fullTextEnabled: false, limits: { maxNumberOfInputFiles: 10, maxTotalInputFileSize: 5000, conversionLimit: 'HIGH', conversionStrategy: 'REPLACE' } });
    const unset = await call(admin('/repository/limits', { repositoryId: 'svc.repository.archive' }), json('PATCH', { maxTotalInputFileSize: null, conversionStrategy: null }));
    expect(unset.body).toMatchObject({ fullTextEnabled: false, limits: { maxNumberOfInputFiles: 10, maxTotalInputFileSize: null, conversionLimit: 'HIGH', conversionStrategy: null } });
    const above = await call(admin('/repository/limits', { repositoryId: 'svc.repository.archive' }), json('PATCH', { maxNumberOfInputFiles: 11 }));
    expect(above.status).toBe(400);
    expect(above.body.message).toContain('CONV_MAX_NUMBER_OF_INPUT_FILES');
  });

  it('answers 404 for an unknown repository and 400 for a malformed repositoryId', async () => {
    expect((await call(admin('/repository/by-name', { repositoryName: 'nowhere' }))).status).toBe(404);
    expect((await call(admin('/repository/limits', { repositoryId: 'svc.repository.nowhere' }), json('PATCH', {}))).status).toBe(404);
    expect((await call(admin('/repository', { repositoryId: 'svc.repository.nowhere' }), { method: 'DELETE' })).status).toBe(404);
    for (const malformed of ['archive', 'svc.repository.', 'svc.repository.a b', 'svc.repo.archive']) {
      const answer = await call(admin('/repository/limits', { repositoryId: malformed }), json('PATCH', {}));
      expect(answer, malformed).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    }
    expect((await call(admin('/repository'), { method: 'DELETE' })).status).toBe(400);
  });

  it('DELETE A/repository removes an empty repository (204) and refuses one that holds entries (409)', async () => {
    await call(admin('/repository'), json('POST', { name: 'scratch' }));
    const folder = await call(`${service.baseUrl}/api/v1/access.svc.content.scratch/v1/folder?sessionId=${service.adminSession}`, json('POST', { name: 'kept' }));
    expect(folder.status).toBe(201);
    expect((await call(admin('/repository', { repositoryId: 'svc.repository.scratch' }), { method: 'DELETE' })).status).toBe(409);
    expect((await call(`${service.baseUrl}/api/v1/access.svc.content.scratch/v1/folder/${folder.body.id}?sessionId=${service.adminSession}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(admin('/repository', { repositoryId: 'svc.repository.scratch' }), { method: 'DELETE' })).status).toBe(204);
    expect((await call(admin('/repository/by-name', { repositoryName: 'scratch' }))).status).toBe(404);
    // gone at once for the content domain too (its cached record was dropped)
    expect((await call(`${service.baseUrl}/api/v1/access.svc.content.scratch/v1/home?sessionId=${service.adminSession}`)).status).toBe(404);
  });

  it('is for administrators: 403 for a user, 401 without a session', async () => {
    for (const [path, init] of [
      ['/repositories', {}],
      ['/repository', json('POST', { name: 'mine' })],
    ] as const) {
      expect((await call(admin(path, {}, userSession), init)).status).toBe(403);
      expect((await call(admin(path, {}, null), init)).status).toBe(401);
    }
  });

  it('is the same through the gateway', async () => {
    const answer = await service.graphql(
      `mutation { r: updateRepositoryLimits(repositoryId: "svc.repository.archive", input: { maxInputFileSize: 999, fullTextEnabled: false }) { id fullTextEnabled limits { maxInputFileSize } } }`,
    );
    expect(answer.data).toEqual({ r: { id: 'svc.repository.archive', fullTextEnabled: false, limits: { maxInputFileSize: 999 } } });
    const listed = await service.graphql<{ repositories: { name: string }[] }>('{ repositories { name } }');
    expect(listed.data?.repositories.map((r) => r.name)).toEqual(['archive', 'default']);
    const refused = await service.graphql('{ repositories { name } }', {}, userSession);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'accessDenied', status: 403 });
  });
});

describe('users (DESIGN §4)', () => {
  it('POST A/user creates a user without ever answering the password; GET A/users lists them', async () => {
    const created = await call(admin('/user'), json('POST', { userName: 'dave', password: 'a long passphrase', roles: ['USER'] }));
    expect(created).toMatchObject({ status: 201, body: { userName: 'dave', roles: ['USER'] } });
    expect(JSON.stringify(created.body)).not.toContain('passphrase');
    const users = await call(admin('/users'));
    expect(users.status).toBe(200);
    expect(users.body.map((u: { userName: string }) => u.userName)).toEqual(['admin', 'carol', 'dave']);
    expect(users.body.every((u: { createdAt: string }) => restDatePattern.test(u.createdAt))).toBe(true);
    expect(JSON.stringify(users.body)).not.toMatch(/password|scrypt/i);
    expect(await service.login('dave', 'a long passphrase')).toMatch(/.{20,}/);
  });

  it('applies the password policy and knows only the roles ADMIN and USER (400); a duplicate is 409', async () => {
    for (const password of ['short', 'x'.repeat(257), 'aaaaaaaaaa', 'Eve-user']) {
      const answer = await call(admin('/user'), json('POST', { userName: 'eve-user', password, roles: ['USER'] }));
      expect(answer, password).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
      expect(answer.body.message).toContain('password');
    }
    expect((await call(admin('/user'), json('POST', { userName: 'eve', password: 'good password', roles: ['ROOT'] }))).status).toBe(400);
    expect((await call(admin('/user'), json('POST', { userName: 'eve' }))).status).toBe(400);
    expect((await call(admin('/user'), json('POST', { userName: 'DAVE', password: 'another password' }))).status).toBe(409);
  });

  it('DELETE A/user removes the user and ends their sessions at once', async () => {
    const session = await service.login('dave', 'a long passphrase');
    expect((await call(`${service.contentBase}/home?sessionId=${session}`)).status).toBe(200);
    expect((await call(admin('/user', { userName: 'dave' }), { method: 'DELETE' })).status).toBe(204);
    expect((await call(`${service.contentBase}/home?sessionId=${session}`)).status).toBe(401);
    expect((await call(admin('/user', { userName: 'dave' }), { method: 'DELETE' })).status).toBe(404);
  });

  it('is for administrators (403, 401) and the same through the gateway', async () => {
    expect((await call(admin('/users', {}, userSession))).status).toBe(403);
    expect((await call(admin('/user', { userName: 'carol' }, null), { method: 'DELETE' })).status).toBe(401);
    const created = await service.graphql('mutation { createUser(userName: "frank", password: "frank password", roles: ["USER"]) { userName roles } }');
    expect(created.data).toEqual({ createUser: { userName: 'frank', roles: ['USER'] } });
    const weak = await service.graphql('mutation { createUser(userName: "gina", password: "gina") { userName } }');
    expect(weak.errors?.[0]?.message).toContain('password');
  });

  it('never deletes the last administrator (409), also when two administrators delete each other at once', async () => {
    // the rule on its own: an administrator session of a user already gone (its deletion raced ahead)
    const bench = await createOperationsBench();
    try {
      const em = bench.services.orm.em.fork() as EntityManager;
      await createUser(em, bench.services, administrator, { userName: 'only-admin', password: 'only admin pw', roles: ['ADMIN'] });
      const refused = deleteUser(bench.services.orm.em.fork() as EntityManager, bench.services, { userName: 'gone-admin', roles: ['ADMIN'], groups: [] }, 'only-admin');
      await expect(refused).rejects.toMatchObject({ reasonCode: 'conflict', message: expect.stringContaining('last administrator') });
    } finally {
      await bench.stop();
    }
    // over REST: the later of the two deletions is refused (409), or finds its own session ended (401)
    await call(admin('/user'), json('POST', { userName: 'root2', password: 'second admin pw', roles: ['ADMIN'] }));
    const root2 = await service.login('root2', 'second admin pw');
    const answers = await Promise.all([
      call(admin('/user', { userName: 'root2' }), { method: 'DELETE' }),
      call(admin('/user', { userName: 'admin' }, root2), { method: 'DELETE' }),
    ]);
    expect(answers.filter((a) => a.status === 204)).toHaveLength(1);
    expect([401, 409]).toContain(answers.find((a) => a.status !== 204)!.status);
    const survivor = answers[0]!.status === 204 ? service.adminSession : root2;
    const admins = (await call(admin('/users', {}, survivor))).body.filter((u: { roles: string[] }) => u.roles.includes('ADMIN'));
    expect(admins).toHaveLength(1);
  });
});
