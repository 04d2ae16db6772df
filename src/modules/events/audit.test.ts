import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, restDatePattern, sql } from '../../../test/helpers/entries.js';
import { convertBytes } from '../../../test/helpers/conversion.js';
import { textPdf } from '../../../test/helpers/pdf.js';
import { startSecondProcess } from '../../../test/helpers/process.js';
import { adminUrl, call, json, startTestService, type TestService } from '../../../test/helpers/service.js';
import { startAuditRetention } from '../../../workers/audit-retention.js';

// The audit trail over REST (GET C/audit, GET A/audit) and GraphQL (auditEvents), as DESIGN §11 writes it.
let service: TestService;
let bob: string;
let open: Record<string, any>;
let closed: Record<string, any>;
let openContent: Record<string, any>;
let closedContent: Record<string, any>;

const audit = (query: Record<string, string | number | string[]> = {}, session = service.adminSession) => call(contentUrl(service, '/audit', query, session));
const adminAudit = (query: Record<string, string> = {}, session = service.adminSession) => call(adminUrl(service, '/audit', query, session));
const typesOf = (body: { entries: { type: string }[] }) => body.entries.map((event) => event.type);

beforeAll(async () => {
  service = await startTestService();
  bob = await service.createUserSession('bob');
  open = await newFolder(service, 'open');
  closed = await newFolder(service, 'closed');
  // `closed`: only its owner (the administrator) and administrators read it
  expect((await call(contentUrl(service, `/folder/${closed.id}/acl`), json('PUT', { inherit: false, entries: [] }))).status).toBe(200);
  openContent = await newContent(service, { name: 'open.txt', parentId: open.id });
  closedContent = await newContent(service, { name: 'closed.txt', parentId: closed.id });
  await call(contentUrl(service, `/content/${openContent.id}`), json('PATCH', { name: 'renamed.txt' }));
});
afterAll(() => service?.stop());

describe('GET C/audit', () => {
  it("answers the repository's events newest first, paged with count, dates in the REST form", async () => {
    const { status, body } = await audit({ limit: 2 });
    expect(status).toBe(200);
    expect(body.entries).toHaveLength(2);
    expect(body.count).toBeGreaterThan(5);
    const [newest, next] = body.entries;
    expect(Number(newest.id)).toBeGreaterThan(Number(next.id));
    expect(newest).toMatchObject({ type: 'ENTRY_UPDATED', repository: 'default', entryId: openContent.id, chronicalId: openContent.id, actor: 'admin', details: { changed: ['name'] } });
    expect(newest.at).toMatch(restDatePattern);
    const second = await audit({ limit: 2, offset: 1 });
    expect(second.body.entries[0]).toEqual(next);
    expect(second.body.count).toBe(body.count);
  });

  it('filters by entry, chronicle, actor, type and time', async () => {
    expect(typesOf((await audit({ entryId: openContent.id })).body)).toEqual(['ENTRY_UPDATED', 'ENTRY_CREATED']);
    expect((await audit({ chronicalId: openContent.id })).body.count).toBe(2);
    expect((await audit({ type: 'ACL_CHANGED' })).body.entries).toMatchObject([{ entryId: closed.id, actor: 'admin' }]);
    expect((await audit({ actor: 'bob' })).body).toMatchObject({ count: 0, entries: [] });
    const [created] = (await audit({ entryId: closed.id, type: 'ENTRY_CREATED' })).body.entries;
    expect((await audit({ from: created.at, to: created.at, entryId: closed.id })).body.entries).toEqual([created]);
    const before = new Date(Date.parse(created.at.replace('+0000', 'Z')) - 1).toISOString().replace('Z', '+0000');
    expect((await audit({ to: before, entryId: closed.id })).body.count).toBe(0);
    // the same instant written with another offset
    const shifted = new Date(Date.parse(created.at.replace('+0000', 'Z')) + 3_600_000).toISOString().replace('Z', '+0100');
    expect((await audit({ from: shifted, to: shifted, entryId: closed.id })).body.entries).toEqual([created]);
  });

  it('a user sees the events of the entries it may read now, not those of others, of purged entries, or of the repository', async () => {
    const { body } = await audit({}, bob);
    const entryIds = new Set(body.entries.map((event: { entryId: string }) => event.entryId));
    expect(entryIds.has(openContent.id) && entryIds.has(open.id)).toBe(true);
    expect(entryIds.has(closedContent.id) || entryIds.has(closed.id)).toBe(false);
    expect(body.count).toBe(body.entries.length);
    expect((await audit({ entryId: closedContent.id }, bob)).body).toMatchObject({ count: 0, entries: [] });

    // bob's own change is his to see; once the content is purged, its events are administrators' only
    const mine = await newContent(service, { name: 'bobs.txt', parentId: open.id, session: bob });
    expect(typesOf((await audit({ entryId: mine.id }, bob)).body)).toEqual(['ENTRY_CREATED']);
    expect((await call(contentUrl(service, `/content/${mine.id}`, { permanent: 'true' }, bob), { method: 'DELETE' })).status).toBe(204);
    expect((await audit({ entryId: mine.id }, bob)).body.count).toBe(0);
    expect(typesOf((await audit({ entryId: mine.id })).body)).toEqual(['ENTRY_PURGED', 'ENTRY_CREATED']);

    // the ACL decides as it is now: once closed to bob, the open folder's history is hidden from him too
    expect((await call(contentUrl(service, `/folder/${open.id}/acl`), json('PUT', { inherit: false, entries: [] }))).status).toBe(200);
    expect((await audit({ entryId: open.id }, bob)).body.count).toBe(0);
    expect((await call(contentUrl(service, `/folder/${open.id}/acl`), json('PUT', { inherit: true, entries: [] }))).status).toBe(200);
  });

  it('refuses bad filters with a 400 naming the parameter', async () => {
    for (const [query, parameter] of [
      [{ from: '2026-11-28' }, 'from'],
      [{ to: '2026-02-31T00:00:00.000+0000' }, 'to'],
      [{ type: 'ENTRY_EXPLODED' }, 'type'],
      [{ limit: -1 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ offset: 'x' }, 'offset'],
      [{ actor: ['a', 'b'] }, 'actor'],
      [{ entryId: '' }, 'entryId'],
      [{ from: '2026-11-28T00:00:00.000+0000', to: '2026-11-27T00:00:00.000+0000' }, 'from'],
    ] as const) {
      const { status, body } = await audit(query as Record<string, string>);
      expect({ query, status, reasonCode: body.reasonCode, names: String(body.message).includes(parameter) }).toEqual({ query, status: 400, reasonCode: 'illegalArguments', names: true });
    }
  });
});

describe('GET A/audit', () => {
  it('administrators see the administration domain: users, groups, repositories, logins', async () => {
    const { status, body } = await adminAudit();
    expect(status).toBe(200);
    const types = new Set(typesOf(body));
    expect(types.has('USER_CREATED') && types.has('LOGIN_SUCCEEDED') && types.has('REPOSITORY_CREATED')).toBe(true);
    expect(types.has('ENTRY_CREATED')).toBe(false);
    expect((await adminAudit({ type: 'USER_CREATED' })).body.entries).toMatchObject([{ actor: 'admin', details: { userName: 'bob' } }]);
  });

  it('a user sees only its own logins, the refused ones included', async () => {
    expect(await service.login('bob', 'wrong password').catch(() => 'refused')).toBe('refused');
    const { status, body } = await adminAudit({}, bob);
    expect(status).toBe(200);
    expect(new Set(body.entries.map((event: { actor: string }) => event.actor))).toEqual(new Set(['bob']));
    expect(typesOf(body)).toEqual(['LOGIN_FAILED', 'LOGIN_SUCCEEDED']);
    expect(body.entries[0].details).toMatchObject({ reason: 'wrongCredentials' });
    // other administration routes stay administrators' own
    expect((await call(adminUrl(service, '/users', {}, bob))).status).toBe(403);
  });
});

describe('GraphQL auditEvents', () => {
  it('answers the same trail through the gateway, with the filters and the visibility of REST', async () => {
    const query = `query($r: String, $e: ID, $t: EventType) { auditEvents(repository: $r, entryId: $e, type: $t, limit: 5) { count entries { id at type entryId chronicalId actor details } } }`;
    const asAdmin = await service.graphql<{ auditEvents: { count: number; entries: Record<string, unknown>[] } }>(query, { r: 'default', e: closedContent.id });
    expect(asAdmin.data?.auditEvents).toMatchObject({ count: 1, entries: [{ type: 'ENTRY_CREATED', entryId: closedContent.id, actor: 'admin' }] });
    expect(asAdmin.data?.auditEvents.entries[0]!.at).toMatch(/Z$/);
    const asBob = await service.graphql<{ auditEvents: { count: number } }>(query, { r: 'default', e: closedContent.id }, bob);
    expect(asBob.data?.auditEvents.count).toBe(0);
    const logins = await service.graphql<{ auditEvents: { entries: { actor: string }[] } }>(query, { t: 'LOGIN_SUCCEEDED' }, bob);
    expect(new Set(logins.data?.auditEvents.entries.map((event) => event.actor))).toEqual(new Set(['bob']));
    const bad = await service.graphql(query, { r: 'default', t: 'NOT_A_TYPE' });
    expect(bad.errors?.[0]?.message).toMatch(/NOT_A_TYPE/);
  });
});

describe('job events', () => {
  it("a conversion run by the worker: pending, running, Done, each in its record's statement, for its client and source content", async () => {
    const { content, job } = await convertBytes(service, textPdf(1), 'one-page.pdf', {}, { session: bob });
    expect(job.state).toBe('Done');
    const { body } = await audit({ type: 'JOB_STATE_CHANGED', entryId: content.id }, bob);
    expect(body.entries.map((event: { details: { state: string } }) => event.details.state)).toEqual(['Done', 'running', 'pending']);
    expect(body.entries[0]).toMatchObject({ actor: 'bob', chronicalId: content.id, details: { jobId: job.serviceRequestJob.id } });
  });
});

describe('retention', () => {
  it('the retention job removes the events older than AUDIT_RETENTION_DAYS (365) and keeps the others', async () => {
    const [old] = await sql<{ id: string }>(service, `insert into event (type, actor, at) values ('LOGIN_FAILED', 'ancient', now() - interval '366 days') returning id::text`);
    const [recent] = await sql<{ id: string }>(service, `insert into event (type, actor, at) values ('LOGIN_FAILED', 'ancient', now() - interval '364 days') returning id::text`);
    const job = startAuditRetention(service.services, 60_000, 10);
    try {
      const until = Date.now() + 10_000;
      while (Date.now() < until && (await sql(service, 'select 1 from event where id = ?', [old!.id])).length > 0) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await job.stop();
    }
    expect((await sql<{ id: string }>(service, `select id::text from event where actor = 'ancient'`)).map((row) => row.id)).toEqual([recent!.id]);
  });
});

describe('the outbox across a crash', () => {
  it('a process killed (SIGKILL) amid changes: every change committed has its one event, and no event lacks its change', async () => {
    const second = await startSecondProcess(service);
    const base = `${second.baseUrl}/api/v1/access.svc.content.default/v1`;
    const answered: string[] = [];
    const requests = Array.from({ length: 80 }, (_, i) =>
      call(`${base}/folder?sessionId=${service.adminSession}`, json('POST', { name: `crash-${i}` })).then(
        ({ status, body }) => void (status === 201 && answered.push(body.id)),
        () => undefined,
      ),
    );
    // killed once some changes were answered, with others in flight
    const until = Date.now() + 30_000;
    while (answered.length < 10 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    process.kill(second.pid, 'SIGKILL');
    await Promise.all(requests);
    await second.stop();

    const folders = await sql<{ id: string }>(service, `select id from entry where name like 'crash-%'`);
    const events = await sql<{ entry_id: string }>(service, `select entry_id from event where type = 'ENTRY_CREATED' and details ->> 'name' like 'crash-%'`);
    expect(answered.length).toBeGreaterThanOrEqual(10);
    // every answered change was committed (others in flight may or may not have been)
    expect(answered.filter((id) => !folders.some((row) => row.id === id))).toEqual([]);
    // one event per committed change, none without it
    expect(events.map((row) => row.entry_id).sort()).toEqual(folders.map((row) => row.id).sort());
  }, 120_000); // a second process's start: past vitest's 30 s at load 20 (startServiceProcess waits 90 s for it)
});
