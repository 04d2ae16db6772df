import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const authenticate = (user: string, password: string) =>
  call(`${service.baseUrl}/api/v1/authenticate?user=${encodeURIComponent(user)}&password=${encodeURIComponent(password)}`, { method: 'POST' });

describe('POST /api/v1/authenticate (spec endpoint 14)', () => {
  it('answers the session id as a JSON string', async () => {
    const { status, body, headers } = await authenticate('admin', 'admin-password-for-tests');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/application\/json/);
    expect(typeof body).toBe('string');
    expect(body).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits, base64url
  });

  it('gives a wrong password and an unknown user the same 401', async () => {
    const wrong = await authenticate('admin', 'not-the-password');
    const unknown = await authenticate('nobody-at-all', 'not-the-password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 401, reasonCode: 'notAuthenticated' });
  });

  it('rejects missing parameters with a 400 that names them', async () => {
    const { status, body } = await call(`${service.baseUrl}/api/v1/authenticate?user=admin`, { method: 'POST' });
    expect(status).toBe(400);
    expect(body.reasonCode).toBe('illegalArguments');
    expect(body.message).toContain('password');
    // GraphQL alike: an empty user or password is a malformed request, not a failed login
    for (const [user, password] of [['', 'x'], ['admin', '']]) {
      const answer = await service.graphql('mutation($u: String!, $p: String!) { authenticate(user: $u, password: $p) }', { u: user, p: password }, '');
      expect(answer.errors?.[0]?.extensions, `${user}/${password}`).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    }
  });

  it('rate-limits repeated failures for one user with 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await authenticate('victim-user', `guess-${i}`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    const { body, headers } = await authenticate('victim-user', 'guess-again');
    expect(body).toMatchObject({ status: 429, reasonCode: 'tooManyRequests' });
    expect(Number(headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // GraphQL clients find the seconds to wait in the error's extensions
    const overGraphql = await service.graphql('mutation { authenticate(user: "victim-user", password: "guess-over-graphql") }', {}, '');
    expect(overGraphql.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'tooManyRequests', status: 429, retryAfter: expect.any(Number) });
  });
});

describe('sessions', () => {
  it('refuses calls without a session, with an unknown one, and after logout (401)', async () => {
    const home = (sessionId?: string) => call(`${service.contentBase}/home${sessionId ? `?sessionId=${sessionId}` : ''}`);
    expect((await home()).status).toBe(401);
    expect((await home('made-up-session')).body).toMatchObject({ status: 401, reasonCode: 'notAuthenticated' });

    const session = await service.login('admin', 'admin-password-for-tests');
    expect((await home(session)).status).toBe(200);
    const logout = await call(`${service.baseUrl}/api/v1/logout?sessionId=${session}`, { method: 'POST' });
    expect(logout.status).toBe(204);
    expect((await home(session)).status).toBe(401);
  });

  it('accepts the session as a Bearer header too', async () => {
    const { status } = await call(`${service.contentBase}/home`, { headers: { authorization: `Bearer ${service.adminSession}` } });
    expect(status).toBe(200);
  });

  it('ends a session after the idle time and after the absolute lifetime', async () => {
    const idle = await service.login('admin', 'admin-password-for-tests');
    const old = await service.login('admin', 'admin-password-for-tests');
    const connection = service.services.orm.em.getConnection();
    const hash = (token: string) => import('node:crypto').then((c) => c.createHash('sha256').update(token).digest('base64url'));
    // move the clocks of the stored sessions instead of waiting
    await connection.execute(`update user_session set last_seen_at = now() - interval '31 minutes' where token_hash = ?`, [await hash(idle)]);
    await connection.execute(`update user_session set expires_at = now() - interval '1 second' where token_hash = ?`, [await hash(old)]);
    expect((await call(`${service.contentBase}/home?sessionId=${idle}`)).status).toBe(401);
    expect((await call(`${service.contentBase}/home?sessionId=${old}`)).status).toBe(401);
  });

  it('keeps a busy session alive whatever the idle time: each call within it moves its idle clock', async () => {
    const short = await startTestService({ SESSION_IDLE_MINUTES: '1' });
    try {
      const session = await short.login('admin', 'admin-password-for-tests');
      const hash = createHash('sha256').update(session).digest('base64url');
      const connection = short.services.orm.em.getConnection();
      const idleSeconds = async () =>
        Number((await connection.execute<{ s: string }[]>('select extract(epoch from now() - last_seen_at) as s from user_session where token_hash = ?', [hash]))[0]!.s);
      // 50 of its 60 seconds idle, then a call: the clock restarts, so the next 50 seconds are fine too
      for (let round = 0; round < 2; round++) {
        await connection.execute(`update user_session set last_seen_at = now() - interval '50 seconds' where token_hash = ?`, [hash]);
        short.services.auth.sessions.forget(hash);
        expect((await call(`${short.contentBase}/home?sessionId=${session}`)).status).toBe(200);
        expect(await idleSeconds()).toBeLessThan(5);
      }
    } finally {
      await short.stop();
    }
  });

  it('stores only a SHA-256 of the session id', async () => {
    const { createHash } = await import('node:crypto');
    const rows = await service.services.orm.em.getConnection().execute<{ token_hash: string }[]>('select token_hash from user_session');
    expect(rows.map((r) => r.token_hash)).not.toContain(service.adminSession);
    expect(rows.map((r) => r.token_hash)).toContain(createHash('sha256').update(service.adminSession).digest('base64url'));
  });
});

describe('roles', () => {
  it('keeps the administration operations to administrators (403 for a user)', async () => {
    const userSession = await service.createUserSession('plain-user');
    const asUser = await service.graphql('{ users { userName } }', {}, userSession);
    expect(asUser.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'accessDenied', status: 403 });
    const asAdmin = await service.graphql<{ users: { userName: string }[] }>('{ users { userName } }');
    expect(asAdmin.data?.users.map((u) => u.userName)).toEqual(expect.arrayContaining(['admin', 'plain-user']));
    // the user can still use the content domain
    expect((await call(`${service.contentBase}/home?sessionId=${userSession}`)).status).toBe(200);
  });

  it('stores each role of a new user once', async () => {
    const created = await call(`${service.adminBase}/user?sessionId=${service.adminSession}`, json('POST', { userName: 'twice-admin', password: 'twice-admin-password', roles: ['ADMIN', 'ADMIN', 'USER'] }));
    expect(created.status).toBe(201);
    expect(created.body.roles).toEqual(['ADMIN', 'USER']);
  });

  it('ends the sessions of a deleted user at once', async () => {
    const session = await service.createUserSession('short-lived');
    expect((await call(`${service.contentBase}/home?sessionId=${session}`)).status).toBe(200);
    const deleted = await service.graphql('mutation { deleteUser(userName: "short-lived") }');
    expect(deleted.data).toEqual({ deleteUser: true });
    expect((await call(`${service.contentBase}/home?sessionId=${session}`)).status).toBe(401);
  });

  it('never returns a password or its hash', async () => {
    const result = await service.graphql('{ users { userName roles createdAt } }');
    expect(JSON.stringify(result)).not.toMatch(/scrypt|password/i);
    // the hash is not even a field a client could ask for
    for (const field of ['password', 'passwordHash']) {
      const asked = await service.graphql(`{ users { userName ${field} } }`);
      expect(asked.data).toBeUndefined();
      expect(asked.errors?.[0]?.message).toContain(`Cannot query field "${field}" on type "User"`);
    }
  });

  it('keeps user and repository administration to administrators over GraphQL', async () => {
    const userSession = await service.createUserSession('no-admin');
    for (const mutation of [
      'mutation { createUser(userName: "x-user", password: "long-enough-1") { userName } }',
      'mutation { deleteUser(userName: "admin") }',
      'mutation { createRepository(input: { name: "not-mine" }) { id } }',
      '{ repositories { id } }',
    ]) {
      const result = await service.graphql(mutation, {}, userSession);
      expect({ mutation, extensions: result.errors?.[0]?.extensions }).toMatchObject({ mutation, extensions: { reasonCode: 'accessDenied', status: 403 } });
    }
    const repositories = await service.graphql<{ repositories: { id: string }[] }>('{ repositories { id } }');
    expect(repositories.data!.repositories.map((r) => r.id)).toEqual(['svc.repository.default']);
  });
});

describe('user names', () => {
  const createUser = (userName: string, password = 'long-enough-password') =>
    service.graphql<{ createUser: { userName: string } }>('mutation($u: String!, $p: String!) { createUser(userName: $u, password: $p) { userName } }', { u: userName, p: password });

  it('are unique without regard to case, even when both are created at once', async () => {
    const [first, second] = await Promise.all([createUser('Race-Twin'), createUser('race-TWIN')]);
    const outcomes = [first, second].map((r) => (r.data ? 'created' : r.errors?.[0]?.extensions?.reasonCode));
    expect(outcomes.sort()).toEqual(['conflict', 'created']);
    expect((await createUser('RACE-twin')).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
  });

  it('log in and are deleted with any spelling of the name; the session names the user as created', async () => {
    expect((await createUser('Case-User', 'case-user-password')).data).toEqual({ createUser: { userName: 'Case-User' } });
    const session = await service.login('CASE-user', 'case-user-password');
    expect((await service.graphql('{ me { userName } }', {}, session)).data).toEqual({ me: { userName: 'Case-User' } });
    expect((await service.graphql('mutation { deleteUser(userName: "case-USER") }')).data).toEqual({ deleteUser: true });
    expect((await call(`${service.contentBase}/home?sessionId=${session}`)).status).toBe(401);
    // nor can an administrator delete themselves by another spelling
    const self = await service.graphql('mutation { deleteUser(userName: "ADMIN") }');
    expect(self.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
  });

  it('log in with their password typed in either Unicode form (NFC and NFD are the same password)', async () => {
    expect((await createUser('unicode-password-user', 'caf\u00e9-cr\u00e8me-br\u00fbl\u00e9e')).data).toBeDefined();
    const decomposed = 'caf\u00e9-cr\u00e8me-br\u00fbl\u00e9e'.normalize('NFD');
    expect(decomposed).not.toBe('caf\u00e9-cr\u00e8me-br\u00fbl\u00e9e');
    expect(await service.login('unicode-password-user', decomposed)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await authenticate('unicode-password-user', 'cafe-creme-brulee')).status).toBe(401);
  });

  it('are NFC-normalised and trimmed; letters outside ASCII (look-alikes such as Cyrillic і or fullwidth Ａ) are refused', async () => {
    expect((await createUser('  trimmed-user \t')).data).toEqual({ createUser: { userName: 'trimmed-user' } });
    expect(await service.login(' trimmed-user ', 'long-enough-password')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const name of ['adm\u0456n', '\uff21dmin', 'caf\u0065\u0301', 'a\u202Eb']) {
      expect({ name, extensions: (await createUser(name)).errors?.[0]?.extensions }).toMatchObject({ name, extensions: { reasonCode: 'illegalArguments', status: 400 } });
    }
  });
});
