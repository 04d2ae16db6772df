import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
let alice: string;
let bob: string;

beforeAll(async () => {
  service = await startTestService();
  alice = await service.createUserSession('alice');
  bob = await service.createUserSession('bob');
});
afterAll(() => service?.stop());

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const restDatePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;
let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++counter}-${Date.now()}.txt`;

/** `C/<path>?sessionId=…&<query>` of the default repository. */
const url = (path: string, session: string, query: Record<string, string> = {}, base = service.contentBase) =>
  contentUrl(service, `/${path}`, query, session, base);

function form(fields: Record<string, string>, file?: { text: string; name: string }): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  if (file) body.append('file', new Blob([file.text], { type: 'text/plain' }), file.name);
  return body;
}

async function upload(text: string, session = alice, name = uniqueName('doc')) {
  const created = await uploadContent(service, { name, bytes: text, session });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ version: '1.0', versionStatus: 'CURRENT', name });
  return created.body as Content;
}

interface Content {
  _type: string;
  id: string;
  chronicalId: string;
  name: string;
  version: string;
  versionStatus: string;
  lockedBy?: string;
  lockedAt?: string;
  comment?: string;
  active: boolean;
  predecessor?: Content;
  resource: { id: string; md5: string; fileSize: number; name: string };
}

const post = (path: string, session: string, init: RequestInit = {}, query: Record<string, string> = {}) =>
  call(url(path, session, query), { method: 'POST', ...init });
const checkOut = (id: string, session = alice) => post(`content/${id}/check-out`, session);
const checkIn = (id: string, session = alice, fields: Record<string, string> = {}, file?: { text: string; name: string }) =>
  post(`content/${id}/check-in`, session, { body: form(fields, file) });
const cancel = (id: string, session = alice) => post(`content/${id}/cancel-check-out`, session);
const lock = (id: string, session = alice) => post(`content/${id}/lock`, session);
const unlock = (id: string, session = alice) => call(url(`content/${id}/lock`, session), { method: 'DELETE' });
const get = (id: string, session = alice) => call(url(`content/${id}`, session));
const listVersions = (id: string, session = alice, query: Record<string, string> = {}) => call(url(`content/${id}/versions`, session, query));
const replace = (id: string, text: string, session = alice, fields: Record<string, string> = {}) =>
  call(url(`content/${id}/resource`, session), { method: 'PUT', body: form(fields, { text, name: 'replaced.txt' }) });

async function download(id: string, session = alice): Promise<{ status: number; text: string; etag: string | null }> {
  const response = await fetch(url(`content/${id}/download`, session));
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
}

async function pendingUploads(): Promise<number> {
  const [row] = await service.services.orm.em.getConnection().execute<{ n: string }[]>(`select count(*) as n from resource where state = 'pending'`);
  return Number(row!.n);
}

async function workingCopies(chronicalId: string): Promise<string[]> {
  const rows = await service.services.orm.em
    .getConnection()
    .execute<{ id: string }[]>(`select id from entry where chronical_id = ? and version_status = 'WORKING_COPY'`, [chronicalId]);
  return rows.map((row) => row.id);
}

function expectConflict(answer: { status: number; body: any }, message: RegExp) {
  expect(answer.status).toBe(409);
  expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 409, reasonCode: 'conflict' });
  expect(answer.body.message).toMatch(message);
}

function expectNotFound(answer: { status: number; body: any }, message: RegExp) {
  expect(answer.status).toBe(404);
  expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 404, reasonCode: 'notFound' });
  expect(answer.body.message).toMatch(message);
}

describe('check-out, check-in and the version history (REST)', () => {
  it('goes 1.0 → working copy → 1.1 (new bytes) → working copy → 2.0, keeping every version readable', async () => {
    const v1 = await upload('version one bytes');
    expect(v1.chronicalId).toBe(v1.id);

    // check-out: a working copy with a new id in the same chronicle, locked for alice
    const out = await checkOut(v1.id);
    expect(out.status).toBe(200);
    const copy = out.body as Content;
    expect(copy).toMatchObject({
      _type: 'svc.model.content.Content',
      chronicalId: v1.id,
      name: v1.name,
      version: '1.0',
      versionStatus: 'WORKING_COPY',
      lockedBy: 'alice',
      active: true,
    });
    expect(copy.id).not.toBe(v1.id);
    expect(copy.lockedAt).toMatch(restDatePattern);
    expect(copy.predecessor).toMatchObject({ id: v1.id, version: '1.0', versionStatus: 'CURRENT', lockedBy: 'alice' });
    expect(copy.resource.id).toBe(v1.resource.id);
    // the lock shows on every version of the chronicle
    expect((await get(v1.id)).body).toMatchObject({ id: v1.id, lockedBy: 'alice', versionStatus: 'CURRENT' });

    // check-in minor with new bytes: the working copy becomes 1.1
    const inMinor = await checkIn(copy.id, alice, { major: 'false', comment: 'fixed a typo' }, { text: 'version one point one', name: 'v11.txt' });
    expect(inMinor.status).toBe(200);
    const v11 = inMinor.body as Content;
    expect(v11).toMatchObject({ id: copy.id, chronicalId: v1.id, version: '1.1', versionStatus: 'CURRENT', comment: 'fixed a typo', name: v1.name });
    expect(v11.lockedBy).toBeUndefined();
    expect(v11.lockedAt).toBeUndefined();
    expect(v11.predecessor).toMatchObject({ id: v1.id, version: '1.0' });
    expect(v11.predecessor!.lockedBy).toBeUndefined();
    expect(v11.resource).toMatchObject({ md5: md5('version one point one'), fileSize: 'version one point one'.length, name: 'v11.txt' });
    expect(v11.resource.id).not.toBe(v1.resource.id);

    // the new version downloads the new bytes, version 1.0 still the old ones
    expect(await download(v11.id)).toMatchObject({ status: 200, text: 'version one point one', etag: `"${md5('version one point one')}"` });
    expect(await download(v1.id)).toMatchObject({ status: 200, text: 'version one bytes', etag: `"${md5('version one bytes')}"` });
    const old = (await get(v1.id)).body as Content;
    expect(old).toMatchObject({ id: v1.id, version: '1.0', versionStatus: 'CURRENT', resource: { md5: md5('version one bytes') } });
    expect(old.predecessor).toBeUndefined();
    expect(old.lockedBy).toBeUndefined();

    // check-out from an older version's id works on the chronicle; check-in major with an empty body
    const again = await checkOut(v1.id);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ versionStatus: 'WORKING_COPY', version: '1.1', predecessor: { id: v11.id } });
    const empty = await post(`content/${again.body.id}/check-in`, alice);
    expect(empty.status).toBe(200);
    const v2 = empty.body as Content;
    expect(v2).toMatchObject({ id: again.body.id, version: '2.0', versionStatus: 'CURRENT', predecessor: { id: v11.id, version: '1.1' } });
    expect(v2.comment).toBeUndefined();
    expect(v2.resource.id).toBe(v11.resource.id);
    expect(await download(v2.id)).toMatchObject({ status: 200, text: 'version one point one' });

    // the history, newest first, with the predecessor chain
    const history = await listVersions(v1.id);
    expect(history.status).toBe(200);
    expect(history.body._type).toBe('svc.model.content.service.v1.request.crud.EntriesResponse');
    expect(history.body.count).toBe(3);
    const entries = history.body.entries as Content[];
    expect(entries.map((e) => [e.id, e.version, e.versionStatus])).toEqual([
      [v2.id, '2.0', 'CURRENT'],
      [v11.id, '1.1', 'CURRENT'],
      [v1.id, '1.0', 'CURRENT'],
    ]);
    expect(entries.map((e) => e.predecessor?.id ?? null)).toEqual([v11.id, v1.id, null]);
    expect(entries.every((e) => e.chronicalId === v1.id && e.lockedBy === undefined)).toBe(true);
    // the same list from any version's id; orderBy/direction and paging apply
    const ascending = await listVersions(v2.id, alice, { orderBy: 'version', orderingDirection: 'asc', limit: '2' });
    expect(ascending.body.count).toBe(3);
    expect(ascending.body.entries.map((e: Content) => e.version)).toEqual(['1.0', '1.1']);
    // the largest page DESIGN §3 allows, as for the searches (a variable's default counts in the cost bound)
    expect((await listVersions(v2.id, alice, { limit: '1000' })).body.count).toBe(3);
    expect(await listVersions(v2.id, alice, { limit: '1001' })).toMatchObject({ status: 400, body: { message: expect.stringContaining('limit') } });

    // searches see the latest version only, unless includeVersions=true
    const latest = await call(url('content/search', alice, { chronicalId: v1.id }));
    expect(latest.body.entries.map((e: Content) => e.id)).toEqual([v2.id]);
    const all = await call(url('content/search', alice, { chronicalId: v1.id, includeVersions: 'true', orderBy: 'version' }));
    expect(all.body.entries.map((e: Content) => e.version)).toEqual(['1.0', '1.1', '2.0']);
  });

  it('shows a working copy to searches only when versionStatus=WORKING_COPY is asked for', async () => {
    const v1 = await upload('search me');
    const copy = (await checkOut(v1.id)).body as Content;
    const search = (query: Record<string, string>) => call(url('content/search', alice, { chronicalId: v1.id, ...query }));

    const plain = await search({});
    expect(plain.body.count).toBe(1);
    expect(plain.body.entries[0]).toMatchObject({ id: v1.id, versionStatus: 'CURRENT', lockedBy: 'alice' });

    const asked = await search({ versionStatus: 'WORKING_COPY' });
    expect(asked.body.count).toBe(1);
    expect(asked.body.entries[0]).toMatchObject({ id: copy.id, versionStatus: 'WORKING_COPY', predecessor: { id: v1.id } });

    // a condition asks for working copies by naming versionStatus
    const byCondition = (condition: string) => call(url('content/search/by-condition', alice, { condition }));
    const chronicle = `chronicalId = '${v1.id}'`;
    expect((await byCondition(chronicle)).body.entries.map((e: Content) => e.id)).toEqual([v1.id]);
    expect((await byCondition(`${chronicle} and versionStatus = 'WORKING_COPY'`)).body.entries.map((e: Content) => e.id)).toEqual([copy.id]);
    expect((await byCondition(`${chronicle} and versionStatus = 'CURRENT'`)).body.entries.map((e: Content) => e.id)).toEqual([v1.id]);
    expect((await byCondition(`${chronicle} and not versionStatus = 'CURRENT'`)).body.entries.map((e: Content) => e.id)).toEqual([copy.id]);
    const both = await byCondition(`${chronicle} and versionStatus in ('CURRENT', 'WORKING_COPY')`);
    expect(both.body.count).toBe(2);
    expect(both.body.entries.map((e: Content) => e.id).sort()).toEqual([v1.id, copy.id].sort());

    const withVersions = await search({ includeVersions: 'true' });
    expect(withVersions.body.entries.map((e: Content) => e.id)).toEqual([v1.id]);
    // the working copy is no version of the history either
    expect((await listVersions(copy.id)).body.entries.map((e: Content) => e.id)).toEqual([v1.id]);

    expect((await cancel(copy.id)).status).toBe(204);
  });

  it('cancels a check-out: the working copy is gone and the content unlocked', async () => {
    const v1 = await upload('cancel me');
    const copy = (await checkOut(v1.id)).body as Content;
    expect(await workingCopies(v1.id)).toEqual([copy.id]);

    const cancelled = await cancel(v1.id);
    expect(cancelled.status).toBe(204);
    expect(cancelled.body).toBeUndefined();
    expect(await workingCopies(v1.id)).toEqual([]);
    expectNotFound(await get(copy.id), new RegExp(copy.id));
    const after = (await get(v1.id)).body as Content;
    expect(after).toMatchObject({ id: v1.id, version: '1.0', versionStatus: 'CURRENT' });
    expect(after.lockedBy).toBeUndefined();
    // the bytes of 1.0 were shared with the working copy and stay
    expect(await download(v1.id)).toMatchObject({ status: 200, text: 'cancel me' });
    expect((await listVersions(v1.id)).body.count).toBe(1);

    // cancelling again: nothing is checked out
    expectConflict(await cancel(v1.id), /not checked out/);
    // and the content can be checked out again
    const next = await checkOut(v1.id);
    expect(next.body).toMatchObject({ versionStatus: 'WORKING_COPY', predecessor: { id: v1.id } });
    expect(next.body.id).not.toBe(copy.id);
    expect((await cancel(next.body.id)).status).toBe(204);
  });

  it('keeps the latest version read-only while checked out: its changes go to the working copy and survive check-in', async () => {
    const v1 = await upload('edit the copy');
    const copy = (await checkOut(v1.id)).body as Content;
    const patch = (id: string, body: Record<string, unknown>) =>
      call(url(`content/${id}`, alice), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const tag = (id: string, method: string) => call(url(`content/${id}/tags`, alice, { tags: 'reviewed' }), { method });

    // the holder too: a change to the version check-in replaces would be lost
    expectConflict(await patch(v1.id, { properties: { customer: 'acme' } }), new RegExp(`checked out by alice: change its working copy '${copy.id}'`));
    expectConflict(await tag(v1.id, 'POST'), /checked out by alice/);
    expectConflict(await tag(v1.id, 'DELETE'), /checked out by alice/);
    // another user hears of the lock first
    expectConflict(await call(url(`content/${v1.id}`, bob), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name":"x.txt"}' }), /locked by alice/);
    expect((await get(v1.id)).body).toMatchObject({ name: v1.name, lastModifiedBy: 'alice' });
    expect((await get(v1.id)).body.properties ?? {}).toEqual({});

    const renamed = uniqueName('renamed');
    expect((await patch(copy.id, { name: renamed, properties: { customer: 'acme' } })).status).toBe(200);
    expect((await tag(copy.id, 'POST')).status).toBe(200);
    const checkInStarted = Date.now();
    const v2 = (await checkIn(copy.id)).body as Content & { properties: Record<string, unknown>; tags: string[]; createdAt: string };
    expect(v2).toMatchObject({ id: copy.id, version: '2.0', name: renamed, properties: { customer: 'acme' }, tags: ['reviewed'] });
    // made by the check-in, not by the check-out that began the working copy
    expect(Date.parse(v2.createdAt.replace(/\+0000$/, 'Z'))).toBeGreaterThanOrEqual(checkInStarted - 5);
    // checked in, the latest version takes changes again
    expect((await tag(v2.id, 'DELETE')).status).toBe(200);
  });

  it('names the latest version in the 409 of a move through the working copy: it moves under its own name', async () => {
    const v1 = await upload('moves with its chronicle');
    const copy = (await checkOut(v1.id)).body as Content;
    const target = (await call(url('folder', alice), json('POST', { name: uniqueName('target') }))).body as { id: string };
    // the target holds the latest version's name, not the one the working copy is given
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('a namesake')]), v1.name);
    form.append('parentId', target.id);
    expect((await call(url('content', alice), { method: 'POST', body: form })).status).toBe(201);
    const refused = await call(url(`content/${copy.id}`, alice), json('PATCH', { parentId: target.id, name: uniqueName('other') }));
    expectConflict(refused, /an active entry named/);
    expect(refused.body.message).toContain(`'${v1.name}'`);
  });

  it('cancels the check-out when the working copy is deleted (CMIS), by its holder or an administrator', async () => {
    const v1 = await upload('delete the copy');
    const remove = (id: string, session = alice, query: Record<string, string> = {}) => call(url(`content/${id}`, session, query), { method: 'DELETE' });
    const copy = (await checkOut(v1.id)).body as Content;
    expectConflict(await remove(copy.id, bob), /locked by alice|checked out by alice/);
    expect(await workingCopies(v1.id)).toEqual([copy.id]);

    expect((await remove(copy.id)).status).toBe(204);
    expect(await workingCopies(v1.id)).toEqual([]);
    const after = (await get(v1.id)).body as Content;
    expect(after).toMatchObject({ id: v1.id, active: true, version: '1.0' });
    expect(after.lockedBy).toBeUndefined();
    expect(await download(v1.id)).toMatchObject({ status: 200, text: 'delete the copy' });

    // permanent=true discards only the working copy too; an administrator may, like cancel-check-out
    const again = (await checkOut(v1.id)).body as Content;
    expect((await remove(again.id, service.adminSession, { permanent: 'true' })).status).toBe(204);
    expect(await workingCopies(v1.id)).toEqual([]);
    expect((await get(v1.id)).body).toMatchObject({ id: v1.id, active: true });
    expect((await listVersions(v1.id)).body.count).toBe(1);
  });

  it('refuses a check-in with form fields it does not take (name, tags): 400, nothing checked in, no pending upload', async () => {
    const v1 = await upload('fields');
    const copy = (await checkOut(v1.id)).body as Content;
    const refused = await checkIn(copy.id, alice, { name: 'renamed.txt', tags: 'x' }, { text: 'new', name: 'new.txt' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/unknown fields 'name', 'tags'/);
    expect(await workingCopies(v1.id)).toEqual([copy.id]);
    expect(await pendingUploads()).toBe(0);
    expect((await cancel(copy.id)).status).toBe(204);
  });

  it('refuses a check-in with a mimeType but no new bytes (400): it would be dropped', async () => {
    const v1 = await upload('typed without bytes');
    const copy = (await checkOut(v1.id)).body as Content;
    const refused = await checkIn(copy.id, alice, { mimeType: 'text/markdown' });
    expect(refused).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining('mimeType') } });
    expect(await workingCopies(v1.chronicalId)).toEqual([copy.id]);
  });

  it('refuses a check-in without a check-out (409) and leaves no pending upload', async () => {
    const v1 = await upload('never checked out');
    const before = await pendingUploads();
    expectConflict(await checkIn(v1.id, alice, { major: 'true' }, { text: 'new bytes', name: 'n.txt' }), /not checked out/);
    expectConflict(await post(`content/${v1.id}/check-in`, alice), /not checked out/);
    expect(await pendingUploads()).toBe(before);
    expect((await get(v1.id)).body).toMatchObject({ version: '1.0', resource: { md5: md5('never checked out') } });
  });

  it('lets only the holder check in; the holder or an administrator cancels', async () => {
    const v1 = await upload('held by alice');
    const copy = (await checkOut(v1.id)).body as Content;

    expectConflict(await checkIn(copy.id, bob, {}, { text: 'bob was here', name: 'b.txt' }), /checked out by alice/);
    expectConflict(await checkIn(copy.id, service.adminSession), /checked out by alice/);
    expectConflict(await cancel(copy.id, bob), /checked out by alice/);
    // bob cannot check out, lock, unlock or replace meanwhile
    expectConflict(await checkOut(v1.id, bob), /already checked out by alice/);
    expectConflict(await lock(v1.id, bob), /locked by alice/);
    expectConflict(await unlock(v1.id, bob), /checked out by alice/);
    expectConflict(await replace(v1.id, 'bob bytes', bob), /checked out by alice/);
    // nor can alice release the check-out's lock by unlocking, nor replace the bytes beside her working copy
    expectConflict(await unlock(v1.id, alice), /check it in or cancel/);
    expectConflict(await replace(v1.id, 'alice bytes', alice), /checked out by you/);
    // a second check-out by the holder is a conflict too
    expectConflict(await checkOut(v1.id, alice), /already checked out by alice/);

    // nothing changed
    expect(await workingCopies(v1.id)).toEqual([copy.id]);
    expect((await get(copy.id)).body).toMatchObject({ versionStatus: 'WORKING_COPY', lockedBy: 'alice', resource: { id: v1.resource.id } });

    // an administrator cancels anybody's check-out
    expect((await cancel(v1.id, service.adminSession)).status).toBe(204);
    expect(await workingCopies(v1.id)).toEqual([]);
    expect((await get(v1.id)).body.lockedBy).toBeUndefined();
  });

  it('lets exactly one of many simultaneous check-outs win', async () => {
    const v1 = await upload('race me');
    const sessions = [alice, bob, alice, bob, alice, bob, alice, bob];
    const answers = await Promise.all(sessions.map((session) => checkOut(v1.id, session)));
    const winners = answers.filter((a) => a.status === 200);
    const losers = answers.filter((a) => a.status !== 200);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(sessions.length - 1);
    for (const loser of losers) expectConflict(loser, /already checked out/);
    const winner = winners[0]!.body as Content;
    expect(await workingCopies(v1.id)).toEqual([winner.id]);
    const holder = winner.lockedBy!;
    expect(['alice', 'bob']).toContain(holder);
    for (const loser of losers) expect(loser.body.message).toContain(holder);
    expect((await get(v1.id)).body.lockedBy).toBe(holder);
    expect((await cancel(winner.id, holder === 'alice' ? alice : bob)).status).toBe(204);
  });

  it('checks in simultaneously only once', async () => {
    const v1 = await upload('check in twice');
    const copy = (await checkOut(v1.id)).body as Content;
    const answers = await Promise.all([checkIn(copy.id, alice, { major: 'false' }), checkIn(copy.id, alice, { major: 'false' })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const history = await listVersions(v1.id);
    expect(history.body.entries.map((e: Content) => e.version)).toEqual(['1.1', '1.0']);
  });
});

describe('locks (REST)', () => {
  it('locks for the owner, idempotently, and keeps other users out until unlocked', async () => {
    const v1 = await upload('lock me');
    const locked = await lock(v1.id);
    expect(locked.status).toBe(200);
    expect(locked.body).toMatchObject({ _type: 'svc.model.content.Content', id: v1.id, lockedBy: 'alice', version: '1.0', versionStatus: 'CURRENT' });
    expect(locked.body.lockedAt).toMatch(restDatePattern);
    const again = await lock(v1.id);
    expect(again.body).toMatchObject({ id: v1.id, lockedBy: 'alice', lockedAt: locked.body.lockedAt });

    expectConflict(await lock(v1.id, bob), /locked by alice/);
    expectConflict(await unlock(v1.id, bob), /locked by alice/);
    expectConflict(await checkOut(v1.id, bob), /locked by alice/);
    const before = await pendingUploads();
    expectConflict(await replace(v1.id, 'bob replaces', bob), /locked by alice/);
    expect(await pendingUploads()).toBe(before);
    const search = await call(url('content/search', bob, { chronicalId: v1.id, isLocked: 'true' }));
    expect(search.body.entries.map((e: Content) => [e.id, e.lockedBy])).toEqual([[v1.id, 'alice']]);

    // the holder may still work on it: a check-out keeps the lock, the check-in releases it
    const copy = await checkOut(v1.id);
    expect(copy.body).toMatchObject({ versionStatus: 'WORKING_COPY', lockedBy: 'alice' });
    const v2 = await checkIn(copy.body.id);
    expect(v2.body).toMatchObject({ version: '2.0', versionStatus: 'CURRENT' });
    expect(v2.body.lockedBy).toBeUndefined();

    const relocked = await lock(v1.id);
    expect(relocked.body.lockedBy).toBe('alice');
    const unlocked = await unlock(v1.id);
    expect(unlocked.status).toBe(200);
    expect(unlocked.body).toMatchObject({ id: v1.id, version: '1.0' });
    expect(unlocked.body.lockedBy).toBeUndefined();
    expect(unlocked.body.lockedAt).toBeUndefined();
    // unlocking an unlocked content answers it unchanged
    const twice = await unlock(v1.id);
    expect(twice.status).toBe(200);
    expect(twice.body.lockedBy).toBeUndefined();
    // every version of the chronicle is unlocked now
    expect((await listVersions(v1.id)).body.entries.map((e: Content) => e.lockedBy ?? null)).toEqual([null, null]);

    // now bob can lock, and an administrator can remove bob's lock
    expect((await lock(v1.id, bob)).body.lockedBy).toBe('bob');
    const byAdmin = await unlock(v1.id, service.adminSession);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.lockedBy).toBeUndefined();
  });

  it('treats a deactivated content as read-only (409) but still lists its versions', async () => {
    const v1 = await upload('deactivated');
    await service.services.orm.em.getConnection().execute(`update entry set active = false where chronical_id = ?`, [v1.id]);
    expectConflict(await checkOut(v1.id), /deactivated/);
    expectConflict(await lock(v1.id), /deactivated/);
    expectConflict(await replace(v1.id, 'new'), /deactivated/);
    const history = await listVersions(v1.id);
    expect(history.body.count).toBe(1);
    expect(history.body.entries[0]).toMatchObject({ id: v1.id, active: false, version: '1.0' });
    expect((await unlock(v1.id)).status).toBe(200);
  });

  it('refuses a lock on a deactivated content also to the user who holds its lock already (read-only wins over "locking one\'s own lock changes nothing")', async () => {
    const v1 = await upload('held-then-deactivated');
    expect((await lock(v1.id)).status).toBe(200);
    expect((await call(`${service.contentBase}/content/${v1.id}?sessionId=${alice}`, { method: 'DELETE' })).status).toBe(204);
    expectConflict(await lock(v1.id), /deactivated/);
    // the lock can still be released, so that it never outlives its use
    expect((await unlock(v1.id)).status).toBe(200);
  });
});

describe('replacing the resource (REST)', () => {
  it('makes a new minor version with the new bytes; older versions keep theirs', async () => {
    const v1 = await upload('original bytes');
    const replaced = await replace(v1.id, 'replacement bytes', alice, { mimeType: 'text/x-custom' });
    expect(replaced.status).toBe(200);
    const v11 = replaced.body as Content;
    expect(v11).toMatchObject({
      chronicalId: v1.id,
      name: v1.name,
      version: '1.1',
      versionStatus: 'CURRENT',
      predecessor: { id: v1.id, version: '1.0' },
      resource: { md5: md5('replacement bytes'), name: 'replaced.txt', mimeType: 'text/x-custom' },
    });
    expect(v11.id).not.toBe(v1.id);
    expect(await download(v11.id)).toMatchObject({ status: 200, text: 'replacement bytes' });
    expect(await download(v1.id)).toMatchObject({ status: 200, text: 'original bytes' });
    const latest = await call(url('content/search', alice, { chronicalId: v1.id }));
    expect(latest.body.entries.map((e: Content) => [e.id, e.version])).toEqual([[v11.id, '1.1']]);

    // replacing again from the old id counts on from the latest version; check-in goes on from there
    const v12 = await replace(v1.id, 'third bytes');
    expect(v12.body).toMatchObject({ version: '1.2', predecessor: { id: v11.id } });
    const copy = await checkOut(v1.id);
    expect(copy.body).toMatchObject({ version: '1.2', predecessor: { id: v12.body.id } });
    expect((await checkIn(copy.body.id, alice, { major: 'false' })).body).toMatchObject({ version: '1.3' });
    expect((await listVersions(v1.id)).body.entries.map((e: Content) => e.version)).toEqual(['1.3', '1.2', '1.1', '1.0']);
  });

  it('requires a file part (400) and multipart (415)', async () => {
    const v1 = await upload('needs a file');
    const noFile = await call(url(`content/${v1.id}/resource`, alice), { method: 'PUT', body: form({ mimeType: 'text/plain' }) });
    expect(noFile.status).toBe(400);
    expect(noFile.body).toMatchObject({ reasonCode: 'illegalArguments' });
    expect(noFile.body.message).toMatch(/file/);
    const json = await call(url(`content/${v1.id}/resource`, alice), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    expect(json.body.reasonCode).toBe('unsupportedMediaType');
    expect((await get(v1.id)).body.version).toBe('1.0');
  });
});

describe('bad requests (REST)', () => {
  it('answers 404 for unknown ids, folders and repositories, leaving no pending upload', async () => {
    const before = await pendingUploads();
    const missing = 'no-such-content';
    expectNotFound(await checkOut(missing), /content 'no-such-content' not found/);
    expectNotFound(await checkIn(missing, alice, {}, { text: 'bytes', name: 'x.txt' }), /not found/);
    expectNotFound(await post(`content/${missing}/check-in`, alice), /not found/);
    expectNotFound(await cancel(missing), /not found/);
    expectNotFound(await lock(missing), /not found/);
    expectNotFound(await unlock(missing), /not found/);
    expectNotFound(await listVersions(missing), /not found/);
    expectNotFound(await replace(missing, 'bytes'), /not found/);
    expect(await pendingUploads()).toBe(before);

    const folder = await call(url('folder', alice), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: uniqueName('folder') }) });
    expect(folder.status).toBe(201);
    expectNotFound(await checkOut(folder.body.id), /content '.*' not found/);
    expectNotFound(await listVersions(folder.body.id), /not found/);

    const v1 = await upload('in the default repository');
    const elsewhere = `${service.baseUrl}/api/v1/access.svc.content.no-such-repository/v1`;
    expectNotFound(await call(url(`content/${v1.id}/check-out`, alice, {}, elsewhere), { method: 'POST' }), /repository 'no-such-repository' not found/);
    expectNotFound(await call(url(`content/${v1.id}/versions`, alice, {}, elsewhere)), /repository 'no-such-repository' not found/);
    expectNotFound(
      await call(url(`content/${v1.id}/check-in`, alice, {}, elsewhere), { method: 'POST', body: form({}, { text: 'bytes', name: 'x.txt' }) }),
      /repository 'no-such-repository' not found/,
    );
    expectNotFound(await call(url(`content/${v1.id}/lock`, alice, {}, elsewhere), { method: 'DELETE' }), /repository/);
    expect(await pendingUploads()).toBe(before);
    expect((await get(v1.id)).body.lockedBy).toBeUndefined();
  });

  it('rejects a malformed major (400), in the form or the query, dropping the upload', async () => {
    const v1 = await upload('major matters');
    const copy = (await checkOut(v1.id)).body as Content;
    const before = await pendingUploads();

    const inForm = await checkIn(copy.id, alice, { major: 'yes' }, { text: 'bytes', name: 'x.txt' });
    expect(inForm.status).toBe(400);
    expect(inForm.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 400, reasonCode: 'illegalArguments' });
    expect(inForm.body.message).toMatch(/major must be 'true' or 'false'/);
    const inQuery = await post(`content/${copy.id}/check-in`, alice, {}, { major: 'maybe' });
    expect(inQuery.status).toBe(400);
    expect(inQuery.body.message).toMatch(/major/);
    const twice = await post(`content/${copy.id}/check-in`, alice, { body: (() => { const f = form({ major: 'true' }); f.append('major', 'false'); return f; })() });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toMatch(/major/);
    const badType = await post(`content/${copy.id}/check-in`, alice, { headers: { 'content-type': 'application/octet-stream' }, body: 'raw bytes' });
    expect(badType.status).toBe(415);
    expect(await pendingUploads()).toBe(before);

    // still checked out; fields may come as a query parameter or a JSON body too
    expect(await workingCopies(v1.id)).toEqual([copy.id]);
    const viaQuery = await post(`content/${copy.id}/check-in`, alice, {}, { major: 'false', comment: 'from the query' });
    expect(viaQuery.body).toMatchObject({ version: '1.1', comment: 'from the query' });
    const copy2 = (await checkOut(v1.id)).body as Content;
    const viaJson = await post(`content/${copy2.id}/check-in`, alice, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ major: false, comment: 'from JSON' }),
    });
    expect(viaJson.body).toMatchObject({ version: '1.2', comment: 'from JSON' });
  });

  it('needs a session (401)', async () => {
    const v1 = await upload('private');
    const anonymous = await call(`${service.contentBase}/content/${v1.id}/check-out`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.reasonCode).toBe('notAuthenticated');
    expect(await workingCopies(v1.id)).toEqual([]);
  });
});

describe('versioning over GraphQL', () => {
  const fields = 'id chronicalId version versionStatus lockedBy comment predecessor { id version } resource { md5 downloadUrl }';

  async function stage(text: string, session: string): Promise<string> {
    const response = await call(`${url('uploads', session)}&fileName=g.txt`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: text });
    expect(response.status).toBe(201);
    return response.body.uploadId as string;
  }

  it('checks out, checks in with an upload, lists versions, locks, unlocks, replaces and cancels', async () => {
    const gql = <T>(query: string, variables: Record<string, unknown>) => service.graphql<T>(query, { repository: 'default', ...variables }, alice);
    const created = await gql<{ createContent: { id: string } }>(
      `mutation($repository: String!, $input: CreateContentInput!) { createContent(repository: $repository, input: $input) { id } }`,
      { input: { uploadId: await stage('graphql one', alice), name: uniqueName('gql') } },
    );
    const id = created.data!.createContent.id;

    const out = await gql<{ checkOut: any }>(`mutation($repository: String!, $id: ID!) { checkOut(repository: $repository, id: $id) { ${fields} } }`, { id });
    expect(out.errors).toBeUndefined();
    expect(out.data!.checkOut).toMatchObject({ chronicalId: id, version: '1.0', versionStatus: 'WORKING_COPY', lockedBy: 'alice', predecessor: { id } });

    const uploadId = await stage('graphql two', alice);
    const checkedIn = await gql<{ checkIn: any }>(
      `mutation($repository: String!, $id: ID!, $input: CheckInInput) { checkIn(repository: $repository, id: $id, input: $input) { ${fields} } }`,
      { id, input: { major: false, comment: 'via graphql', uploadId } },
    );
    expect(checkedIn.errors).toBeUndefined();
    const v11 = checkedIn.data!.checkIn;
    expect(v11).toMatchObject({ id: out.data!.checkOut.id, version: '1.1', versionStatus: 'CURRENT', lockedBy: null, comment: 'via graphql', predecessor: { id, version: '1.0' } });
    expect(v11.resource.md5).toBe(md5('graphql two'));
    expect(v11.resource.downloadUrl).toBe(`/api/v1/access.svc.content.default/v1/content/${v11.id}/download`);
    // the upload is used up
    const reused = await gql(`mutation($repository: String!, $id: ID!) { checkOut(repository: $repository, id: $id) { id } }`, { id });
    expect(reused.errors).toBeUndefined();
    const reuse = await gql(
      `mutation($repository: String!, $id: ID!, $input: CheckInInput) { checkIn(repository: $repository, id: $id, input: $input) { id } }`,
      { id, input: { uploadId } },
    );
    expect(reuse.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    expect(reuse.errors?.[0]?.message).toMatch(/upload/);

    const cancelled = await gql<{ cancelCheckOut: any }>(`mutation($repository: String!, $id: ID!) { cancelCheckOut(repository: $repository, id: $id) { ${fields} } }`, { id });
    expect(cancelled.data!.cancelCheckOut).toMatchObject({ id: v11.id, version: '1.1', lockedBy: null });

    const locked = await gql<{ lock: any }>(`mutation($repository: String!, $id: ID!) { lock(repository: $repository, id: $id) { id lockedBy } }`, { id });
    expect(locked.data!.lock).toEqual({ id, lockedBy: 'alice' });
    const asBob = await service.graphql(`mutation($repository: String!, $id: ID!) { lock(repository: $repository, id: $id) { id } }`, { repository: 'default', id }, bob);
    expect(asBob.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    expect(asBob.errors?.[0]?.message).toMatch(/locked by alice/);
    const unlocked = await gql<{ unlock: any }>(`mutation($repository: String!, $id: ID!) { unlock(repository: $repository, id: $id) { id lockedBy } }`, { id });
    expect(unlocked.data!.unlock).toEqual({ id, lockedBy: null });

    const replaced = await gql<{ replaceResource: any }>(
      `mutation($repository: String!, $id: ID!, $input: ReplaceResourceInput!) { replaceResource(repository: $repository, id: $id, input: $input) { ${fields} } }`,
      { id, input: { uploadId: await stage('graphql three', alice) } },
    );
    expect(replaced.errors).toBeUndefined();
    expect(replaced.data!.replaceResource).toMatchObject({ version: '1.2', predecessor: { id: v11.id }, resource: { md5: md5('graphql three') } });

    const history = await gql<{ versions: { count: number; entries: any[] } }>(
      `query($repository: String!, $id: ID!) { versions(repository: $repository, id: $id) { count entries { ... on Content { id version predecessor { id } } } } }`,
      { id },
    );
    expect(history.data!.versions.count).toBe(3);
    expect(history.data!.versions.entries.map((e) => e.version)).toEqual(['1.2', '1.1', '1.0']);
    expect(history.data!.versions.entries.map((e) => e.predecessor?.id ?? null)).toEqual([v11.id, id, null]);
  });

  it('answers errors with reason codes: 409 check-in without check-out, 404 unknown id and repository', async () => {
    const v1 = await upload('gql errors');
    const checkInQuery = `mutation($repository: String!, $id: ID!) { checkIn(repository: $repository, id: $id) { id } }`;
    const noCheckOut = await service.graphql(checkInQuery, { repository: 'default', id: v1.id }, alice);
    expect(noCheckOut.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    expect(noCheckOut.errors?.[0]?.message).toMatch(/not checked out/);
    const unknown = await service.graphql(checkInQuery, { repository: 'default', id: 'nope' }, alice);
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    const otherRepository = await service.graphql(checkInQuery, { repository: 'elsewhere', id: v1.id }, alice);
    expect(otherRepository.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    expect(otherRepository.errors?.[0]?.message).toMatch(/repository 'elsewhere'/);
  });
});
