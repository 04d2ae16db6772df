import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/modules/events/index.js';
import { commitEvents, untilLive } from '../helpers/events.js';
import { newContent, newFolder, succeeded } from '../helpers/entries.js';
import { call, openSubscription, startTestService, type TestService } from '../helpers/service.js';

interface ContentEvent {
  id: string;
  type: string;
  entryId: string | null;
  repository: string | null;
  actor: string | null;
  details: Record<string, unknown>;
  at: string;
}
type Received = { contentEvents: ContentEvent };

const fields = 'id type entryId chronicalId repository actor details at';
const subscription = (folderId?: string) =>
  `subscription { contentEvents(repository: "default"${folderId ? `, folderId: "${folderId}"` : ''}) { ${fields} } }`;
const repositoryOf = async (em: EntityManager) => (await em.execute<{ id: string }[]>(`select id from repository where name = 'default'`))[0]!.id;
/** the events of a subscription but the probes that found it live */
const received = (events: { data?: Received }[]) => events.map((event) => event.data!.contentEvents).filter((event) => !event.details['probe']);

// Live events (DESIGN §11, docs/events.md "Live events"): the outbox's commits through the gateway, filtered by the policy.
describe('contentEvents subscription', () => {
  let service: TestService;
  let probe: Record<string, any>;
  let hidden: Record<string, any>;
  let hiddenContent: Record<string, any>;
  let visibleContent: Record<string, any>;
  let readerSession: string;

  beforeAll(async () => {
    service = await startTestService();
    probe = await newFolder(service, 'probe');
    // a folder whose ACL lets no one in but its owner (the administrator) and administrators
    hidden = await newFolder(service, 'hidden');
    await succeeded(service, 'PUT', `/folder/${hidden.id}/acl`, { inherit: false, entries: [] });
    hiddenContent = await newContent(service, { name: 'secret.txt', parentId: hidden.id });
    visibleContent = await newContent(service, { name: 'open.txt', parentId: probe.id });
    readerSession = await service.createUserSession('event-reader');
  });
  afterAll(() => service?.stop());

  it('delivers committed events over graphql-ws in commit order, with the outbox fields', async () => {
    const live = await openSubscription<Received>(service, subscription());
    try {
      await untilLive(service, live, probe.id);
      await commitEvents(service, [{ type: 'ENTRY_TAGGED', entryId: visibleContent.id, chronicalId: visibleContent.chronicalId, details: { added: ['a'] } }]);
      await commitEvents(service, [{ type: 'ENTRY_LOCKED', entryId: visibleContent.id }]);
      // the two events themselves: a probe that untilLive sent again (the first was slow on a loaded machine)
      // may come after it returned, and be one of the next two events
      await expect.poll(() => received(live.events).length).toBeGreaterThanOrEqual(2);
      const [tagged, locked] = received(live.events);
      expect(tagged).toMatchObject({ type: 'ENTRY_TAGGED', entryId: visibleContent.id, chronicalId: visibleContent.chronicalId, repository: 'default', actor: 'test', details: { added: ['a'] } });
      expect(Number(locked!.id)).toBeGreaterThan(Number(tagged!.id));
      expect(locked!.type).toBe('ENTRY_LOCKED');
      expect(Number.isNaN(Date.parse(tagged!.at))).toBe(false);
    } finally {
      await live.close();
    }
  });

  it('delivers nothing of a change that rolled back', async () => {
    const live = await openSubscription<Received>(service, subscription());
    try {
      await untilLive(service, live, probe.id);
      const failed = service.services.orm.em.fork().transactional(async (tx) => {
        await recordEvent(tx as EntityManager, { type: 'ENTRY_PURGED', actor: 'test', entryId: visibleContent.id, repository: { id: await repositoryOf(tx as EntityManager), name: 'default' } });
        throw new Error('the change failed after its event');
      });
      await expect(failed).rejects.toThrow('the change failed');
      await commitEvents(service, [{ type: 'ENTRY_UNLOCKED', entryId: visibleContent.id }]);
      await expect.poll(() => received(live.events).map((event) => event.type)).toContain('ENTRY_UNLOCKED');
      expect(received(live.events).map((event) => event.type)).not.toContain('ENTRY_PURGED');
    } finally {
      await live.close();
    }
  });

  it('gives a user no event of an entry it may not read, and those it may read; an administrator gets both', async () => {
    const reader = await openSubscription<Received>(service, subscription(), { session: readerSession });
    const admin = await openSubscription<Received>(service, subscription());
    try {
      await untilLive(service, reader, probe.id);
      await untilLive(service, admin, probe.id);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: hiddenContent.id }]);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: hidden.id }]);
      // an event without an entry (a repository's ACL) is the administrators'
      await commitEvents(service, [{ type: 'ACL_CHANGED', entryId: null }]);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: visibleContent.id, details: { last: true } }]);
      await expect.poll(() => received(admin.events).some((event) => event.details['last'])).toBe(true);
      await expect.poll(() => received(reader.events).some((event) => event.details['last'])).toBe(true);
      expect(received(admin.events).map((event) => event.entryId)).toEqual([hiddenContent.id, hidden.id, null, visibleContent.id]);
      expect(received(reader.events).map((event) => event.entryId)).toEqual([visibleContent.id]);
    } finally {
      await Promise.all([reader.close(), admin.close()]);
    }
  });

  it('with folderId, delivers the events of entries directly in the folder and of those moved out of it', async () => {
    const sub = await newFolder(service, 'sub', probe.id);
    const live = await openSubscription<Received>(service, subscription(probe.id));
    try {
      await untilLive(service, live, visibleContent.id);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: hiddenContent.id }]); // elsewhere
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: probe.id }]); // the folder itself, not in it
      await commitEvents(service, [{ type: 'ENTRY_MOVED', entryId: hiddenContent.id, details: { fromFolderId: probe.id, toFolderId: hidden.id } }]);
      await commitEvents(service, [{ type: 'ENTRY_CREATED', entryId: sub.id, details: { last: true } }]);
      await expect.poll(() => received(live.events).some((event) => event.details['last'])).toBe(true);
      const events = received(live.events).filter((event) => event.entryId !== visibleContent.id);
      expect(events.map((event) => [event.type, event.entryId])).toEqual([
        ['ENTRY_MOVED', hiddenContent.id],
        ['ENTRY_CREATED', sub.id],
      ]);
    } finally {
      await live.close();
    }
  });

  it('refuses a folder the caller may not read or that does not exist (404), an unknown repository, and a caller without a session', async () => {
    for (const [query, session, reasonCode] of [
      [subscription(hidden.id), readerSession, 'notFound'],
      [subscription('no-such-folder'), service.adminSession, 'notFound'],
      ['subscription { contentEvents(repository: "nope") { id } }', service.adminSession, 'notFound'],
      [subscription(), 'not-a-session', undefined],
    ] as const) {
      const live = await openSubscription<Received>(service, query, { session });
      await live.until(1);
      const error = live.events[0]?.errors?.[0] ?? live.outcome().error;
      if (reasonCode) expect((error as { extensions?: { reasonCode?: string } }).extensions?.reasonCode, query).toBe(reasonCode);
      else expect(error, query).toBeDefined();
      await live.close();
    }
  });

  it('delivers over SSE through the gateway', async () => {
    const controller = new AbortController();
    const response = await fetch(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${readerSession}` },
      body: JSON.stringify({ query: subscription() }),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => undefined);
    try {
      for (let attempt = 0; attempt < 100 && !text.includes('"sse-marker"'); attempt++) {
        await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: visibleContent.id, details: { marker: 'sse-marker' } }]);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: hiddenContent.id, details: { marker: 'sse-hidden' } }]);
      await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: visibleContent.id, details: { marker: 'sse-last' } }]);
      await expect.poll(() => text.includes('"sse-last"')).toBe(true);
      expect(text).toContain(`"entryId":"${visibleContent.id}"`);
      expect(text).not.toContain('sse-hidden');
    } finally {
      controller.abort();
      await reading;
    }
  });

  it('ends the subscription when its session logs out', async () => {
    const session = await service.createUserSession('event-leaver');
    const live = await openSubscription<Received>(service, subscription(), { session });
    await untilLive(service, live, probe.id);
    expect((await call(`${service.baseUrl}/api/v1/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })).status).toBe(204);
    expect(await live.ended).toMatchObject({ error: { code: 4401 } });
    await live.close();
  });
});
