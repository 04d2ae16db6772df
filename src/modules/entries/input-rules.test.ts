import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, fileForm, newContent, newFolder, sql, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';
import { repairMediaTypesSql } from '../../db/migrations/Migration20261122220000RepairMediaTypes.js';

/*
 * What a name, a media type and a properties object may hold (issue 11 items 5, 9, 10), through every
 * entry point: REST multipart and JSON, the raw upload endpoint, GraphQL. docs/security.md names these tests.
 */

let service: TestService;
let bob: string;
beforeAll(async () => {
  service = await startTestService();
  bob = await service.createUserSession('bob');
});
afterAll(() => service?.stop());

const url = (path: string, query: Record<string, string> = {}, session?: string) => contentUrl(service, path, query, session);
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}.txt`;

function expectBadRequest(answer: { status: number; body: any }, message?: RegExp): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 400, reasonCode: 'illegalArguments' });
  if (message) expect(answer.body.message).toMatch(message);
}


const stage = async (session = service.adminSession) => {
  const staged = await call(contentUrl(service, '/uploads', { fileName: 'x.txt' }, session), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'staged' });
  expect(staged.status).toBe(201);
  return staged.body.uploadId as string;
};

const createContentMutation = `mutation($input: CreateContentInput!) { createContent(repository: "default", input: $input) { id name tags properties resource { mimeType } } }`;

/** A GraphQL request whose body is written as is (to send JSON escapes such as a lone surrogate, or 1e309). */
async function rawGraphql(body: string) {
  const response = await fetch(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminSession}` },
    body,
  });
  return (await response.json()) as { data?: Record<string, any>; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

describe('media types', () => {
  const bad = ['text/html\r\nSet-Cookie: a=b', 'text', 'text/', '/plain', 'text/plain; charset', 'text/pl ain', 'tëxt/plain', 'text/plain\u0000', `text/${'x'.repeat(300)}`];
  const good = ['text/plain', 'application/vnd.oasis.opendocument.text', 'text/plain; charset=utf-8', 'multipart/mixed; boundary="a b"', 'image/svg+xml'];

  it('refuses a bad mimeType on create, replace and check-in (400), and stores a good one', async () => {
    for (const mimeType of bad) {
      expectBadRequest(await uploadContent(service, { name: unique('bad-type'), mimeType }), /mimeType/);
    }
    for (const mimeType of good) {
      const created = await uploadContent(service, { name: unique('good-type'), mimeType });
      expect(created.status).toBe(201);
      expect(created.body.resource.mimeType).toBe(mimeType);
    }
    const content = await newContent(service, { name: unique('replaced') });
    expectBadRequest(await call(url(`/content/${content.id}/resource`), { method: 'PUT', body: fileForm('new bytes', 'new.txt', { mimeType: 'text/html\r\nX: y' }) }), /mimeType/);
    expect((await call(url(`/content/${content.id}/check-out`), { method: 'POST' })).status).toBe(200);
    expectBadRequest(await call(url(`/content/${content.id}/check-in`), { method: 'POST', body: fileForm('new bytes', 'new.txt', { mimeType: 'no-slash' }) }), /mimeType/);
    // the refused requests changed nothing and left no pending upload behind
    const versions = await call(url(`/content/${content.id}/versions`));
    expect(versions.body.count).toBe(1);
    expect(await sql(service, `select id from resource where state = 'pending'`)).toEqual([]);
  });

  it('refuses a bad mimeType in GraphQL inputs and a bad Content-Type on the raw upload endpoint', async () => {
    const refused = await service.graphql(createContentMutation, { input: { uploadId: await stage(), name: unique('gql'), mimeType: 'text/html\nX: y' } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'illegalArguments', reasonCode: 'illegalArguments', status: 400 });
    const raw = await call(contentUrl(service, '/uploads', { fileName: 'raw.txt' }), { method: 'POST', headers: { 'content-type': 'nonsense' }, body: 'x' });
    expectBadRequest(raw, /Content-Type/);
    const withParameters = await call(contentUrl(service, '/uploads', { fileName: 'raw.txt' }), { method: 'POST', headers: { 'content-type': 'text/csv; charset=utf-8' }, body: 'a,b' });
    expect(withParameters).toMatchObject({ status: 201, body: { mimeType: 'text/csv' } });
  });

  it('the migration repairs stored bad media types, so their downloads work again', async () => {
    const content = await newContent(service, { name: unique('stored-bad'), bytes: 'hello' });
    const kept = ['text/plain; charset=utf-8', 'multipart/mixed; boundary="a b"', 'application/vnd.ms-excel.sheet.macroEnabled.12'];
    const keep = await Promise.all(kept.map((mimeType) => newContent(service, { name: unique('stored-good'), mimeType })));
    await sql(service, `update resource set mime_type = ? where id = ?`, ['text/html\r\nSet-Cookie: a=b', content.resource.id]);
    expect((await fetch(url(`/content/${content.id}/download`))).status).toBe(500);
    await sql(service, repairMediaTypesSql);
    const download = await fetch(url(`/content/${content.id}/download`));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    // the same rule in SQL: every value the service accepts stays as it was
    for (const [i, content] of keep.entries()) {
      expect(await sql(service, `select mime_type from resource where id = ?`, [content.resource.id])).toEqual([{ mime_type: kept[i] }]);
    }
  });
});

describe('names and tags', () => {
  it('are NFC-normalised and trimmed before the uniqueness rule', async () => {
    const folder = await newFolder(service, unique('nfc-folder'));
    const composed = await newContent(service, { name: '  caf\u00e9.txt ', parentId: folder.id });
    expect(composed.name).toBe('caf\u00e9.txt');
    const decomposed = await uploadContent(service, { name: 'cafe\u0301.txt', parentId: folder.id });
    expect(decomposed.status).toBe(409);
    const renamed = await newContent(service, { name: 'other.txt', parentId: folder.id });
    expect((await call(url(`/content/${renamed.id}`), json('PATCH', { name: ' cafe\u0301.txt' }))).status).toBe(409);
    const sub = await call(url('/folder'), json('POST', { name: ' Su\u0308b ', parentId: folder.id }));
    expect(sub.body.name).toBe('S\u00fcb');
  });

  it('refuses bidi overrides, C1 controls and lone surrogates in names and tags (400)', async () => {
    for (const name of ['invoice\u202efdp.exe', 'a\u2066b', 'c1\u0085name']) {
      expectBadRequest(await uploadContent(service, { name }), /name/);
      expectBadRequest(await call(url('/folder'), json('POST', { name })), /name/);
    }
    // a lone surrogate survives JSON only (a multipart body is UTF-8, where it becomes U+FFFD)
    const lone = await call(url('/folder'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"lone\\ud800"}' });
    expectBadRequest(lone, /Unicode/);
    const content = await newContent(service, { name: unique('tagged') });
    for (const tag of ['a\u202eb', 'x\u009fy']) {
      expectBadRequest(await call(url(`/content/${content.id}/tags`, { tags: tag }), { method: 'POST' }), /tag/);
      expectBadRequest(await uploadContent(service, { name: unique('t'), tags: [tag] }), /tag/);
    }
  });
});

describe('names that show nothing', () => {
  it('are refused (400): only zero-width characters, fillers, marks or spaces; one visible character is enough', async () => {
    for (const name of ['\u200b', '\u200d\u200c\ufeff', '\u3164', '\u0301\u0301', '\u200b \u2060']) {
      expectBadRequest(await uploadContent(service, { name }), /name must hold a visible character/);
      expectBadRequest(await call(url('/folder'), json('POST', { name })), /name must hold a visible character/);
    }
    const content = await newContent(service, { name: unique('a\u200bb') });
    expect(content.name).toMatch(/^a\u200bb-\d+\.txt$/);
    expectBadRequest(await call(url(`/content/${content.id}`), json('PATCH', { name: '\u200b\u200b' })), /name must hold a visible character/);
  });
});

describe('typeName', () => {
  it('is bounded: at most 128 characters and no control characters, through PATCH and multipart (400); empty removes it', async () => {
    const content = await newContent(service, { name: unique('typed'), typeName: "type'?" });
    expect(content.typeName).toBe("type'?");
    expectBadRequest(await call(url(`/content/${content.id}`), json('PATCH', { typeName: 't'.repeat(129) })), /typeName is longer than 128 characters/);
    expectBadRequest(await call(url(`/content/${content.id}`), json('PATCH', { typeName: 'a/b c\n' })), /typeName must not contain control characters/);
    expectBadRequest(await uploadContent(service, { name: unique('typed'), typeName: 'x'.repeat(500_000) }), /typeName is longer than 128 characters/);
    const emoji = await call(url(`/content/${content.id}`), json('PATCH', { typeName: '😀'.repeat(128) }));
    expect(emoji.body.typeName).toBe('😀'.repeat(128));
    const removed = await call(url(`/content/${content.id}`), json('PATCH', { typeName: '' }));
    expect(removed.body.typeName).toBeUndefined();
  });
});

describe('properties', () => {
  it('a lone surrogate is a 400 through PATCH, multipart and GraphQL', async () => {
    const content = await newContent(service, { name: unique('surrogate') });
    const patch = await call(url(`/content/${content.id}`), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"properties":{"a":"\\ud800"}}' });
    expectBadRequest(patch, /Unicode/);
    expectBadRequest(await uploadContent(service, { name: unique('s'), properties: '{"a":{"b":["\\udfff"]}}' }), /Unicode/);
    const body = `{"query":${JSON.stringify(createContentMutation)},"variables":{"input":{"uploadId":"${await stage()}","name":"${unique('g')}","properties":{"k":"\\ud800"}}}}`;
    const gql = await rawGraphql(body);
    expect(gql.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
  });

  it('1e309 is a 400 through PATCH, multipart and GraphQL, not a silent null', async () => {
    const content = await newContent(service, { name: unique('huge'), properties: { a: 1 } });
    const patch = await call(url(`/content/${content.id}`), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"properties":{"a":1e309}}' });
    expectBadRequest(patch, /out of range/);
    expect((await call(url(`/content/${content.id}`))).body.properties).toEqual({ a: 1 });
    expectBadRequest(await uploadContent(service, { name: unique('h'), properties: '{"a":-1e309}' }), /out of range/);
    const body = `{"query":${JSON.stringify(createContentMutation)},"variables":{"input":{"uploadId":"${await stage()}","name":"${unique('g')}","properties":{"n":1e309}}}}`;
    expect((await rawGraphql(body)).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    const literal = await service.graphql(`mutation { updateContent(repository: "default", id: "${content.id}", input: { properties: { a: 1e309 } }) { id } }`);
    expect(literal.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
  });

  it('an integer beyond ±(2^53 − 1) is a 400 through PATCH, multipart and GraphQL, not stored altered; one stored before blocks no change or copy', async () => {
    const content = await newContent(service, { name: unique('big'), properties: { a: 1 } });
    const patch = await call(url(`/content/${content.id}`), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"properties":{"a":9007199254740993}}' });
    expectBadRequest(patch, /integer beyond ±9007199254740991.*send it as a string/);
    expect((await call(url(`/content/${content.id}`))).body.properties).toEqual({ a: 1 });
    expectBadRequest(await uploadContent(service, { name: unique('b'), properties: '{"a":{"b":[-12345678901234567890]}}' }), /send it as a string/);
    const literal = await service.graphql(`mutation { updateContent(repository: "default", id: "${content.id}", input: { properties: { a: 9007199254740993 } }) { id } }`);
    expect(literal.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    // the largest exact integer and a string of any length are kept as given
    const kept = await call(url(`/content/${content.id}`), json('PATCH', { properties: { a: 9007199254740991, b: '9007199254740993' } }));
    expect(kept.body.properties).toEqual({ a: 9007199254740991, b: '9007199254740993' });
    // one that came in before this rule does not stop changes of other properties
    await sql(service, `update entry set properties = '{"old": 12345678901234567890}' where id = ?`, [content.id]);
    expect((await call(url(`/content/${content.id}`), json('PATCH', { properties: { other: 1 } }))).status).toBe(200);
    expect((await call(url(`/content/${content.id}/copy`), json('POST', { name: unique('copied') }))).status).toBe(201);
  });

  it('100,000 nested arrays are a 400 saying how deep a value may be, through REST and GraphQL variables (the message was a stack overflow)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const rest = await call(url('/folder'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name":"${unique('deep')}","properties":{"a":${deep}}}` });
    expectBadRequest(rest, /nested deeper than 64 levels/);
    const body = `{"query":${JSON.stringify(createContentMutation)},"variables":{"input":{"uploadId":"${await stage()}","name":"${unique('g')}","properties":{"a":${deep}}}}}`;
    const gql = await rawGraphql(body);
    expect(gql.errors?.[0]).toMatchObject({ message: 'Variables: nested deeper than 64 levels.', extensions: { reasonCode: 'illegalArguments', status: 400 } });
  });
});

describe('JSON bodies', () => {
  it('need Content-Type application/json (415 without one), as documented', async () => {
    const untyped = await call(url('/folder'), { method: 'POST', body: new Uint8Array(Buffer.from(`{"name":"${unique('untyped')}"}`)) });
    expect(untyped.status).toBe(415);
    expect(untyped.body).toMatchObject({ reasonCode: 'unsupportedMediaType', message: "expected a JSON body (Content-Type: application/json), got none" });
  });
});

describe('downloads of deactivated contents', () => {
  it('are 404s unless the owner or an administrator asks with includeInactive=true', async () => {
    const content = await newContent(service, { name: unique('bobs'), bytes: 'deactivated bytes', session: bob });
    const download = (session: string, query: Record<string, string> = {}) => fetch(url(`/content/${content.id}/download`, query, session));
    expect((await download(service.adminSession)).status).toBe(200);
    expect((await call(url(`/content/${content.id}`, {}, bob), { method: 'DELETE' })).status).toBe(204);
    expect((await download(bob)).status).toBe(404);
    expect((await download(service.adminSession)).status).toBe(404);
    const carol = await service.createUserSession('carol');
    expect((await download(carol, { includeInactive: 'true' })).status).toBe(404);
    const asOwner = await download(bob, { includeInactive: 'true' });
    expect(asOwner.status).toBe(200);
    expect(await asOwner.text()).toBe('deactivated bytes');
    expect((await download(service.adminSession, { includeInactive: 'true' })).status).toBe(200);
  });
});
