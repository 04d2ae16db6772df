import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondProcess, type ServiceProcess } from '../helpers/process.js';
import { adminUrl, call, json, startTestService, type TestService } from '../helpers/service.js';

// Two processes on one database: A (here) where the administrator changes groups, and B (its own
// process) where the member's requests go. B keeps principals (with their groups) cached for 5 s; it
// must follow A's changes well within that (the `memberships_changed` NOTIFY).
let a: TestService;
let b: ServiceProcess;
let member: string;
const cacheTtlMs = 5_000;
/** how long B may take to follow a change: well under the cache's time to live, with room for a loaded machine */
const followBoundMs = 2_000;

beforeAll(async () => {
  a = await startTestService({ JOB_CONCURRENCY: '0' });
  b = await startSecondProcess(a, { JOB_CONCURRENCY: '0' });
  member = await a.createUserSession('Member');
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

/** The member's groups as process B's principal of its session holds them (`me` through B's gateway). */
async function groupsInB(): Promise<string[]> {
  const response = await call(`${b.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${member}` },
    body: JSON.stringify({ query: '{ me { groups } }' }),
  });
  expect(response.status).toBe(200);
  return response.body.data.me.groups;
}
/** An administration call in process A; it must answer `status`. */
async function inA(method: string, route: string, query: Record<string, string>, status: number): Promise<void> {
  const answer = await call(adminUrl(a, route, query), { method });
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
}
/** Milliseconds until B holds `groups`, polled; fails after the cache's time to live. */
async function followedWithin(groups: string[]): Promise<number> {
  const start = Date.now();
  while (JSON.stringify(await groupsInB()) !== JSON.stringify(groups)) {
    if (Date.now() - start > cacheTtlMs + 1_000) throw new Error(`process B did not follow the change to ${JSON.stringify(groups)}`);
    await sleep(20);
  }
  return Date.now() - start;
}

describe('membership changes reach every process at once (memberships_changed NOTIFY)', () => {
  it("B follows A: a member added, removed, and the group's deletion, well within the 5 s cache", async () => {
    const created = await call(adminUrl(a, '/group'), json('POST', { name: 'Editors' }));
    expect(created.status).toBe(201);
    // B reads the principal now: its cached copy would last the whole 5 s
    expect(await groupsInB()).toEqual([]);

    await inA('POST', '/group/members', { name: 'editors', userName: 'member' }, 200);
    const added = await followedWithin(['Editors']);
    await inA('DELETE', '/group/members', { name: 'editors', userName: 'member' }, 204);
    const removed = await followedWithin([]);
    await inA('POST', '/group/members', { name: 'editors', userName: 'member' }, 200);
    await followedWithin(['Editors']);
    await inA('DELETE', '/group', { name: 'EDITORS' }, 204);
    const deleted = await followedWithin([]);
    expect(Math.max(added, removed, deleted)).toBeLessThan(followBoundMs);
  });
});
