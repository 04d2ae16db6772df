import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitEvents } from '../helpers/events.js';
import { newContent, newFolder } from '../helpers/entries.js';
import { startReceiver, type Answer, type ReceivedDelivery } from '../helpers/receiver.js';
import { adminUrl, call, json, startTestService, type TestService } from '../helpers/service.js';

// Webhooks (DESIGN §11, docs/events.md "Webhooks") delivered by this process's worker loop to real
// receivers on 127.0.0.1 (hence WEBHOOK_ALLOW_PRIVATE=true here; the address rules: webhook-addresses.test.ts).
// Short timings stand for the production ones: a 1 s answer timeout, retries from 50 ms doubling to
// 200 ms, failing after 1.5 s of failures.
let service: TestService;
const secret = 'a-secret-of-the-receiver';

beforeAll(async () => {
  service = await startTestService({
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_RETRY_MAX_MS: '200',
    WEBHOOK_RETRY_FOR_MS: '1500',
  });
});
afterAll(() => service?.stop());

type Webhook = { id: string; url: string; events: string[]; repository: string | null; state: string; lastError: string | null; failingSince: string | null };
const register = (body: Record<string, unknown>, session = service.adminSession) => call(adminUrl(service, '/webhook', {}, session), json('POST', body));
const webhooks = async () => (await call(adminUrl(service, '/webhooks'))).body as Webhook[];
const webhookOf = async (id: string) => (await webhooks()).find((webhook) => webhook.id === id)!;

/** A receiver and a webhook to it for `events` (only this test's events reach it: each test has its types or deletes its webhook). */
async function hook(events: string[], answer?: (delivery: ReceivedDelivery, index: number) => Answer) {
  const receiver = await startReceiver(answer);
  const registered = await register({ url: receiver.url, events, secret });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  const webhook = registered.body as Webhook;
  return {
    receiver,
    webhook,
    done: async () => {
      await call(adminUrl(service, '/webhook', { id: webhook.id }), { method: 'DELETE' });
      await receiver.close();
    },
  };
}

describe('webhook registration (administrators)', () => {
  it('registers, lists and deletes a webhook, never answering its secret (REST and GraphQL)', async () => {
    const registered = await register({ url: 'http://127.0.0.1:9/hook', events: ['ENTRY_CREATED', 'ENTRY_CREATED', 'ENTRY_DELETED'], repository: 'default', secret });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['ENTRY_CREATED', 'ENTRY_DELETED'], repository: 'default', state: 'active', lastError: null, createdBy: 'admin' });
    expect(registered.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*\+0000$/);
    const listed = await call(adminUrl(service, '/webhooks'));
    expect(listed.status).toBe(200);
    expect(listed.body.map((webhook: Webhook) => webhook.id)).toContain(registered.body.id);
    const graphql = await service.graphql('{ webhooks { id url state events } }');
    expect(graphql.data).toMatchObject({ webhooks: [{ id: registered.body.id, state: 'active' }] });
    for (const text of [JSON.stringify(registered.body), JSON.stringify(listed.body), JSON.stringify(graphql)]) expect(text).not.toContain(secret);
    // the schema has no field that could answer it
    expect((await service.graphql('{ webhooks { secret } }')).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    expect((await call(adminUrl(service, '/webhook', { id: registered.body.id }), { method: 'DELETE' })).status).toBe(204);
    expect((await call(adminUrl(service, '/webhook', { id: registered.body.id }), { method: 'DELETE' })).body).toMatchObject({ reasonCode: 'notFound' });
    expect((await webhooks()).map((webhook) => webhook.id)).not.toContain(registered.body.id);
  });

  it('refuses bad registrations with a clear 400 (404 for an unknown repository), and users who are not administrators (403)', async () => {
    const valid = { url: 'http://127.0.0.1:9/hook', events: ['ENTRY_CREATED'], secret };
    const refusals: [Record<string, unknown>, number, RegExp][] = [
      [{ ...valid, url: 'not a url' }, 400, /url/],
      [{ ...valid, url: 'ftp://127.0.0.1/hook' }, 400, /http or https/],
      [{ ...valid, url: 'http://user:pw@127.0.0.1/hook' }, 400, /user name or password/],
      [{ ...valid, events: [] }, 400, /events/],
      [{ ...valid, events: ['NO_SUCH_EVENT'] }, 400, /NO_SUCH_EVENT|events/],
      [{ ...valid, secret: 'short' }, 400, /secret: at least 16/],
      [{ url: valid.url, events: valid.events }, 400, /secret/],
      [{ ...valid, repository: 'no-such-repository' }, 404, /no-such-repository/],
      [{ ...valid, url: 'http://no-such-host.invalid/hook' }, 400, /does not resolve/],
    ];
    for (const [body, status, message] of refusals) {
      const answer = await register(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.message, JSON.stringify(body)).toMatch(message);
    }
    const user = await service.createUserSession('not-an-admin');
    expect((await register(valid, user)).status).toBe(403);
    expect((await call(adminUrl(service, '/webhooks', {}, user))).status).toBe(403);
    expect((await webhooks()).filter((webhook) => webhook.url === valid.url)).toEqual([]);
  });
});

describe('webhook delivery', () => {
  it('POSTs the event as JSON signed with X-Signature-256 (HMAC-SHA256 of the raw body), with X-Event-Id and X-Event-Type', async () => {
    const { receiver, done } = await hook(['ENTRY_TAGGED']);
    try {
      const content = await newContent(service, { name: 'signed.txt' });
      await commitEvents(service, [{ type: 'ENTRY_TAGGED', entryId: content.id, chronicalId: content.chronicalId, details: { added: ['signed'] } }]);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
      const [delivery] = receiver.received;
      // what a receiver does (docs/events.md): the HMAC of the bytes as received, compared in constant time
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(delivery!.rawBody).digest('hex')}`);
      const given = Buffer.from(String(delivery!.headers['x-signature-256']));
      expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
      const event = JSON.parse(delivery!.rawBody.toString());
      expect(event).toMatchObject({ type: 'ENTRY_TAGGED', repository: 'default', entryId: content.id, chronicalId: content.chronicalId, actor: 'test', details: { added: ['signed'] } });
      expect(delivery!.headers['x-event-id']).toBe(event.id);
      expect(delivery!.headers['x-event-type']).toBe('ENTRY_TAGGED');
      expect(delivery!.headers['content-type']).toBe('application/json');
      // another secret does not verify
      expect(`sha256=${createHmac('sha256', 'another-secret-entirely').update(delivery!.rawBody).digest('hex')}`).not.toBe(String(given));
    } finally {
      await done();
    }
  });

  it('gets only the types and the repository it was registered for, and nothing of a change that rolled back', async () => {
    const receiver = await startReceiver();
    const registered = await register({ url: receiver.url, events: ['ENTRY_LOCKED'], repository: 'default', secret });
    try {
      await commitEvents(service, [{ type: 'ENTRY_UNLOCKED', entryId: 'other-type' }]);
      await commitEvents(service, [{ type: 'ENTRY_LOCKED', entryId: 'no-repository', repository: null }]);
      await service.services.orm.em.fork().transactional(async (tx) => {
        await tx.execute(`insert into event (repository_id, repository, type, entry_id, actor) values ('r', 'default', 'ENTRY_LOCKED', 'rolled-back', 'test')`);
        throw new Error('the change failed');
      }).catch(() => undefined);
      await commitEvents(service, [{ type: 'ENTRY_LOCKED', entryId: 'wanted' }]);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.events().map((event) => event.entryId)).toEqual(['wanted']);
    } finally {
      await call(adminUrl(service, '/webhook', { id: registered.body.id }), { method: 'DELETE' });
      await receiver.close();
    }
  });

  it('retries a failed delivery with growing delays until a 2xx', async () => {
    const { receiver, webhook, done } = await hook(['ENTRY_LOCKED'], (_delivery, index) => ({ status: index < 3 ? 500 : 204 }));
    try {
      await commitEvents(service, [{ type: 'ENTRY_LOCKED', entryId: 'retried' }]);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(4);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.received).toHaveLength(4); // delivered: no more attempts
      const ids = new Set(receiver.received.map((delivery) => delivery.headers['x-event-id']));
      expect(ids.size).toBe(1); // the same event each time: the receiver deduplicates by X-Event-Id
      const gaps = receiver.received.slice(1).map((delivery, i) => delivery.at - receiver.received[i]!.at);
      // 50, 100, 200 ms with up to half taken off by jitter (plus the poll): never sooner than that
      expect(gaps[0]).toBeGreaterThanOrEqual(25);
      expect(gaps[1]).toBeGreaterThanOrEqual(50);
      expect(gaps[2]).toBeGreaterThanOrEqual(100);
      expect(await webhookOf(webhook.id)).toMatchObject({ state: 'active', lastError: null });
      const [queued] = await service.services.orm.em.fork().execute(`select count(*)::int as n from webhook_delivery where webhook_id = ?`, [webhook.id]);
      expect(queued).toEqual({ n: 0 });
    } finally {
      await done();
    }
  });

  it("delivers an entry's events in order, a later one waiting while an earlier one is retried", async () => {
    // the first attempt of each event fails, so a later event would overtake an earlier one were they not ordered
    const tried = new Set<string>();
    const { receiver, done } = await hook(['ENTRY_UPDATED'], (delivery) => {
      const id = String(delivery.headers['x-event-id']);
      if (tried.has(id)) return { status: 200 };
      tried.add(id);
      return { status: 503 };
    });
    try {
      for (let i = 0; i < 5; i++) await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: 'ordered-a', details: { n: i } }]);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: 'ordered-b', details: { n: 0 } }]);
      await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(12);
      const ofA = receiver.events().filter((event) => event.entryId === 'ordered-a').map((event) => event.details['n']);
      // each event twice (failed, then delivered), never a later one before an earlier one was delivered
      expect(ofA).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    } finally {
      await done();
    }
  });

  it('marks the webhook failing after the retry period with the last error; events meanwhile are not queued; an administrator re-enables it and the queued delivery goes out', async () => {
    let up = false;
    const { receiver, webhook, done } = await hook(['ENTRY_RESTORED'], () => ({ status: up ? 200 : 500 }));
    try {
      await commitEvents(service, [{ type: 'ENTRY_RESTORED', entryId: 'failing', details: { n: 1 } }]);
      await expect.poll(async () => (await webhookOf(webhook.id)).state, { timeout: 15_000 }).toBe('failing');
      const failing = await webhookOf(webhook.id);
      expect(failing).toMatchObject({ state: 'failing', lastError: 'answered 500' });
      expect(failing.failingSince).toMatch(/\+0000$/);
      expect(receiver.received.length).toBeGreaterThan(3); // retried over the period
      const attempts = receiver.received.length;
      await commitEvents(service, [{ type: 'ENTRY_RESTORED', entryId: 'while-failing' }]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.received.length).toBe(attempts); // nothing goes out while failing
      up = true;
      const enabled = await call(adminUrl(service, '/webhook/enable', { id: webhook.id }), { method: 'POST' });
      expect(enabled).toMatchObject({ status: 200, body: { state: 'active', failingSince: null } });
      await expect.poll(() => receiver.events().at(-1)?.entryId, { timeout: 10_000 }).toBe('failing');
      await expect.poll(async () => (await webhookOf(webhook.id)).lastError, { timeout: 10_000 }).toBeNull();
      expect(receiver.events().map((event) => event.entryId)).not.toContain('while-failing');
      // GraphQL: the same verb
      expect((await service.graphql(`mutation { enableWebhook(id: "${webhook.id}") { state } }`)).data).toEqual({ enableWebhook: { state: 'active' } });
      expect((await call(adminUrl(service, '/webhook/enable', { id: 'no-such-webhook' }), { method: 'POST' })).status).toBe(404);
    } finally {
      await done();
    }
  }, 30_000);

  it('gives up on a receiver that never answers after the timeout, and on a redirect (not followed)', async () => {
    const target = await startReceiver();
    const { receiver, webhook, done } = await hook(['ENTRY_PURGED'], (_delivery, index) =>
      index === 0 ? 'hang' : { status: 302, headers: { location: target.url } },
    );
    try {
      const started = Date.now();
      await commitEvents(service, [{ type: 'ENTRY_PURGED', entryId: 'hanging' }]);
      await expect.poll(async () => (await webhookOf(webhook.id)).lastError, { timeout: 10_000 }).toBe('no answer within 1000 ms');
      expect(Date.now() - started).toBeLessThan(9_000);
      await expect.poll(async () => (await webhookOf(webhook.id)).lastError, { timeout: 10_000 }).toMatch(/^answered 302 \(redirects are not followed\)/);
      expect(receiver.received.length).toBeGreaterThanOrEqual(2);
      expect(target.received).toHaveLength(0);
    } finally {
      await done();
      await target.close();
    }
  });

  it('does not delay uploads while 1,000 events wait for a slow receiver', async () => {
    const folder = await newFolder(service, 'busy');
    const timedUploads = async (label: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        await newContent(service, { name: `${label}-${i}.txt`, parentId: folder.id });
        ms.push(Date.now() - started);
      }
      return ms.sort((a, b) => a - b)[2]!;
    };
    const alone = await timedUploads('alone');
    const { receiver, done } = await hook(['CONTENT_CHECKED_IN'], () => ({ status: 200, delayMs: 2_000 }));
    try {
      await commitEvents(service, Array.from({ length: 1_000 }, (_, n) => ({ type: 'CONTENT_CHECKED_IN' as const, entryId: `busy-${n}`, details: { n } })));
      // the worker loop holds WEBHOOK_CONCURRENCY deliveries open at the slow receiver while the uploads run
      await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThan(0);
      const beside = await timedUploads('beside');
      // the median upload beside the backlog: no slower than three times the one alone, with a second of slack for a loaded machine
      expect(beside, `alone ${alone} ms, beside the backlog ${beside} ms`).toBeLessThan(3 * alone + 1_000);
      expect(receiver.received.length).toBeLessThan(1_000);
    } finally {
      await done();
    }
  }, 120_000);
});
