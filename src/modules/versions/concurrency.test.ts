import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, fileForm, newContent, sql } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

/*
 * Versioning verbs racing on one content over REST (issue 11 item 4): each answers 200/201/204
 * (serialised) or 409 (refused by the state the other left), never 500, and the chronicle stays whole.
 */

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const url = (path: string, query: Record<string, string> = {}) => contentUrl(service, path, query);


let counter = 0;
const verbs = {
  replace: (id: string) => call(url(`/content/${id}/resource`), { method: 'PUT', body: fileForm(`bytes ${++counter}`, 'new.txt') }),
  checkIn: (id: string) => call(url(`/content/${id}/check-in`), { method: 'POST', body: fileForm(`checked in ${++counter}`, 'new.txt', { major: 'false' }) }),
  checkOut: (id: string) => call(url(`/content/${id}/check-out`), { method: 'POST' }),
  cancel: (id: string) => call(url(`/content/${id}/cancel-check-out`), { method: 'POST' }),
  copy: (id: string) => call(url(`/content/${id}/copy`), json('POST', { name: `copy-${++counter}.txt` })),
  delete: (id: string) => call(url(`/content/${id}`), { method: 'DELETE' }),
  restore: (id: string) => call(url(`/content/${id}/restore`), { method: 'POST' }),
  lock: (id: string) => call(url(`/content/${id}/lock`), { method: 'POST' }),
  unlock: (id: string) => call(url(`/content/${id}/lock`), { method: 'DELETE' }),
  tags: (id: string) => call(url(`/content/${id}/tags`, { tags: `t${++counter}` }), { method: 'POST' }),
  update: (id: string) => call(url(`/content/${id}`), json('PATCH', { name: `renamed-${++counter}.txt`, properties: { n: counter } })),
};
type Verb = keyof typeof verbs;

/** A content in the state the pair needs to get past its first check: checked out for check-in and cancel, deactivated for restore. */
async function contentFor(pair: Verb[]): Promise<string> {
  const { id } = await newContent(service, { name: `race-${++counter}.txt`, bytes: 'first' });
  if (pair.some((verb) => verb === 'checkIn' || verb === 'cancel')) expect((await verbs.checkOut(id)).status).toBe(200);
  if (pair.includes('restore')) expect((await verbs.delete(id)).status).toBe(204);
  return id;
}

/** The chronicle of `id` is whole: one latest CURRENT version, at most one working copy, one lock on every row. */
async function expectWholeChronicle(id: string): Promise<void> {
  const rows = await sql<{ version_status: string; is_latest: boolean; locked_by: string | null; active: boolean }>(
    service,
    `select version_status, is_latest, locked_by, active from entry where chronical_id = (select chronical_id from entry where id = ?)`,
    [id],
  );
  if (rows.length === 0) return; // purged
  expect(rows.filter((row) => row.is_latest && row.version_status === 'CURRENT')).toHaveLength(1);
  expect(rows.filter((row) => row.version_status === 'WORKING_COPY').length).toBeLessThanOrEqual(1);
  expect(new Set(rows.map((row) => row.locked_by)).size).toBe(1);
  expect(new Set(rows.map((row) => row.active)).size).toBe(1);
}

describe('versioning verbs in parallel on one content', () => {
  it('20 parallel PUT …/resource: every one is a new version (200), none a 500', async () => {
    const { id } = await newContent(service, { name: 'twenty.txt', bytes: 'first' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => verbs.replace(id)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const versions = await call(url(`/content/${id}/versions`, { limit: '100' }));
    expect(versions.body.count).toBe(21);
    expect(new Set(versions.body.entries.map((entry: { version: string }) => entry.version)).size).toBe(21);
    await expectWholeChronicle(id);
  });

  it('a folder deleted while its contents get new versions: 2xx, 404 or 409, never 500', async () => {
    for (let round = 0; round < 3; round++) {
      const folder = await call(url('/folder'), json('POST', { name: `doomed-${++counter}` }));
      const ids = await Promise.all([1, 2, 3].map(async () => (await newContent(service, { name: `inside-${++counter}.txt`, parentId: folder.body.id })).id));
      const answers = await Promise.all([
        ...ids.flatMap((id) => [verbs.replace(id), verbs.checkOut(id), verbs.update(id)]),
        call(url(`/folder/${folder.body.id}`, { recursive: 'true' }), { method: 'DELETE' }),
      ]);
      for (const answer of answers) expect([200, 204, 404, 409], JSON.stringify(answer.body)).toContain(answer.status);
      expect(answers.at(-1)!.status, JSON.stringify(answers.at(-1)!.body)).toBe(204);
    }
  }, 120_000);

  const names = Object.keys(verbs) as Verb[];
  const pairs = names.flatMap((a, i) => names.slice(i).map((b) => [a, b] as Verb[]));

  it(`every pair of ${names.length} verbs (${pairs.length} pairs), two rounds each: 2xx or 409, never 500`, async () => {
    const allowed = new Set([200, 201, 204, 409]);
    const failures: string[] = [];
    for (let round = 0; round < 2; round++) {
      // a few pairs at a time: they race each other too, without swamping the machine
      for (let start = 0; start < pairs.length; start += 11) {
        await Promise.all(
          pairs.slice(start, start + 11).map(async (pair) => {
            const id = await contentFor(pair);
            const answers = await Promise.all(pair.map((verb) => verbs[verb](id)));
            answers.forEach((answer, i) => {
              if (!allowed.has(answer.status)) failures.push(`${pair.join(' + ')}: ${pair[i]} answered ${answer.status} ${JSON.stringify(answer.body)}`);
            });
            await expectWholeChronicle(id);
          }),
        );
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
