import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileForm, newContent } from '../helpers/entries.js';
import { call, startTestService, type TestService } from '../helpers/service.js';

let service: TestService;
let otherSession: string;
let contentId: string;
beforeAll(async () => {
  service = await startTestService();
  otherSession = await service.createUserSession('second-session-user');
  contentId = (await newContent(service, { name: 'session-source.txt', bytes: 'twelve bytes' })).id;
});
afterAll(() => service?.stop());

/** A plain HTTP call of the content domain with the session named as given, and no other. */
function callWith(path: string, { sessionIds = [], authorization, method = 'GET', body }: { sessionIds?: string[]; authorization?: string; method?: string; body?: BodyInit }) {
  const query = new URLSearchParams(sessionIds.map((id) => ['sessionId', id]));
  return call(`${service.contentBase}${path}${sessionIds.length ? `?${query}` : ''}`, {
    method,
    body,
    headers: { ...(authorization ? { authorization } : {}), ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}) },
  });
}

const bytes = () => fileForm('staged bytes', 'staged.txt');

/** REST (a GraphQL route), download and upload: the three kinds of plain HTTP handler. */
const calls = {
  'REST GET content': (options: Parameters<typeof callWith>[1]) => callWith(`/content/${contentId}`, options),
  download: (options: Parameters<typeof callWith>[1]) => callWith(`/content/${contentId}/download`, options),
  upload: (options: Parameters<typeof callWith>[1]) => callWith('/uploads', { ...options, method: 'POST', body: bytes() }),
};

const pendingUploads = async () =>
  Number((await service.services.orm.em.getConnection().execute<{ n: string }[]>(`select count(*) as n from resource where state = 'pending'`))[0]!.n);

describe('where the session of a plain HTTP call comes from (REST, download, upload)', () => {
  it.each(Object.entries(calls))('%s: sessionId alone, Bearer alone, or both naming the same session', async (_name, send) => {
    const ok = (status: number) => expect([200, 201]).toContain(status);
    ok((await send({ sessionIds: [service.adminSession] })).status);
    ok((await send({ authorization: `Bearer ${service.adminSession}` })).status);
    ok((await send({ sessionIds: [service.adminSession], authorization: `Bearer ${service.adminSession}` })).status);
  });

  it.each(Object.entries(calls))('%s: two different sessions are a 400 illegalArguments, and nothing happens', async (_name, send) => {
    const before = await pendingUploads();
    for (const options of [
      { sessionIds: [service.adminSession], authorization: `Bearer ${otherSession}` },
      { sessionIds: [otherSession], authorization: `Bearer ${service.adminSession}` },
      // a header that names no Bearer session is not the session the parameter names either
      { sessionIds: [service.adminSession], authorization: 'Basic YWRtaW46YWRtaW4=' },
    ]) {
      const answer = await send(options);
      expect(answer.status, JSON.stringify(options)).toBe(400);
      expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 400, reasonCode: 'illegalArguments' });
      expect(answer.body.message).toMatch(/sessionId and Authorization/);
    }
    expect(await pendingUploads()).toBe(before);
  });

  it.each(Object.entries(calls))('%s: sessionId given twice is a 400, even with the same value twice', async (_name, send) => {
    for (const sessionIds of [
      [service.adminSession, otherSession],
      [service.adminSession, service.adminSession],
    ]) {
      const answer = await send({ sessionIds });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ reasonCode: 'illegalArguments', message: 'sessionId must be given once' });
    }
  });

  it.each(Object.entries(calls))('%s: no session is a 401 that says how to send one', async (_name, send) => {
    const answer = await send({});
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ reasonCode: 'notAuthenticated', message: expect.stringMatching(/sessionId.*Authorization: Bearer/) });
    // RFC 9110 §11.6.1: a 401 names the scheme
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each(Object.entries(calls))('%s: a sessionId no session could have (non-ASCII, control characters) is a 401, not a 500', async (_name, send) => {
    for (const sessionId of ['\u00ff\u00fe', '\u20ac', 'a\u0000b', 'a\nb', 'a\rb', '\ud800']) {
      const answer = await send({ sessionIds: [sessionId] });
      expect(answer.status, JSON.stringify(sessionId)).toBe(401);
      expect(answer.body).toMatchObject({ reasonCode: 'notAuthenticated', message: 'unknown or expired session' });
    }
  });

  it('checks the caller before the request: a bad body is a 401 without a session and a 403 for a user on the administration domain, not a 400', async () => {
    const post = (path: string, body: string, session?: string) =>
      call(`${path}${session ? `?sessionId=${session}` : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [path, body] of [
      [`${service.adminBase}/repository`, '{}'],
      [`${service.adminBase}/user`, '{"roles":"ADMIN"}'],
      [`${service.contentBase}/folder`, '{"name": 12}'],
    ] as const) {
      expect((await post(path, body)).body, path).toMatchObject({ status: 401, reasonCode: 'notAuthenticated' });
    }
    expect((await post(`${service.adminBase}/repository`, '{}', otherSession)).body).toMatchObject({ status: 403, reasonCode: 'accessDenied' });
    expect((await post(`${service.adminBase}/user`, 'not json', otherSession)).body).toMatchObject({ status: 403, reasonCode: 'accessDenied' });
    // with the right, the body is read: a 400 that says what is wrong with it
    expect((await post(`${service.adminBase}/repository`, '{}', service.adminSession)).body).toMatchObject({ status: 400, reasonCode: 'illegalArguments' });
  });

  it('runs the call as the session named, whichever way it is named', async () => {
    const folder = (name: string, options: Parameters<typeof callWith>[1]) =>
      callWith('/folder', { ...options, method: 'POST', body: JSON.stringify({ name }) }).then((answer) => answer.body.owner);
    expect(await folder('by-header', { authorization: `Bearer ${otherSession}` })).toBe('second-session-user');
    expect(await folder('by-parameter', { sessionIds: [otherSession] })).toBe('second-session-user');
    expect(await folder('by-both', { sessionIds: [otherSession], authorization: `Bearer ${otherSession}` })).toBe('second-session-user');
  });
});
