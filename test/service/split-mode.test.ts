import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, newFolder } from '../helpers/entries.js';
import { commitEvents, untilLive } from '../helpers/events.js';
import { call, createTestDatabase, json, openSubscription, startTestService, subscriptionEvents, type TestService } from '../helpers/service.js';

/**
 * Production topology in one test process: three subgraph servers (ROLE=content|admin|health) and a
 * gateway (ROLE=gateway) reaching them over HTTP, on one database and one shared storage folder.
 */
describe('split mode (ROLE)', () => {
  const services: TestService[] = [];
  let gateway: TestService;

  beforeAll(async () => {
    const shared = { DATABASE_URL: await createTestDatabase() };
    const urls: Record<string, string> = {};
    for (const role of ['content', 'admin', 'health']) {
      const subgraph = await startTestService({ ...shared, ROLE: role }, { authenticate: false });
      services.push(subgraph);
      urls[`SUBGRAPH_${role.toUpperCase()}_URL`] = `${subgraph.baseUrl}/graphql`;
    }
    gateway = await startTestService({
      ...shared,
      ROLE: 'gateway',
      ...urls,
      CONTENT_STORAGE_PATH: services[0]!.config.contentStoragePath,
    });
    services.push(gateway);
    // a job worker of its own: what it commits reaches subscribers through the content process
    services.push(await startTestService({ ...shared, ROLE: 'worker', CONTENT_STORAGE_PATH: services[0]!.config.contentStoragePath }, { authenticate: false }));
  });
  afterAll(async () => {
    for (const service of services.reverse()) await service.stop();
  });

  it('serves REST and bytes through the gateway process', async () => {
    const folder = await newFolder(gateway, 'split');
    const content = await newContent(gateway, { name: 'note.txt', parentId: folder.id, bytes: 'split mode bytes' });
    expect(content).toMatchObject({ name: 'note.txt', version: '1.0', parent: { id: folder.id } });
    const download = await fetch(`${gateway.contentBase}/content/${content.id}/download?sessionId=${gateway.adminSession}`);
    expect(await download.text()).toBe('split mode bytes');
    const search = await call(`${gateway.contentBase}/content/search?sessionId=${gateway.adminSession}&parentId=${folder.id}`);
    expect(search.body.entries.map((e: { id: string }) => e.id)).toEqual([content.id]);
  });

  it('federates the subgraphs over HTTP, errors included', async () => {
    const rootEntries = (await call(`${gateway.contentBase}/home?sessionId=${gateway.adminSession}`)).body.count as number;
    const result = await gateway.graphql('{ health { status } me { userName } home(repository: "default") { count } }');
    expect(result.data).toEqual({ health: { status: 'ok' }, me: { userName: 'admin' }, home: { count: rootEntries } });
    const missing = await gateway.graphql('{ folder(repository: "default", id: "nope") { id } }');
    expect(missing.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
  });

  it('relays a subscription from the health subgraph', async () => {
    const { events } = await subscriptionEvents<{ healthChanges: { status: string } }>(gateway, 'subscription { healthChanges(intervalMs: 1000) { status } }', 2);
    const statuses = events.map((event) => event.data!.healthChanges.status);
    expect(statuses).toEqual(['ok', 'ok']);
  });

  it('ends a subscription on the gateway process when its session logs out through the admin subgraph process', async () => {
    const session = await gateway.createUserSession('split-leaver');
    const subscription = await openSubscription<{ healthChanges: { status: string } }>(gateway, 'subscription { healthChanges(intervalMs: 1000) { status } }', { session });
    try {
      // under way (its first event came) before the logout: a fixed 500 ms was not always enough on a loaded machine
      await subscription.until(1, 20_000);
      const loggedOut = performance.now();
      // logout runs in the admin process, which announces it (pg_notify); the gateway process closes the socket
      expect((await call(`${gateway.baseUrl}/api/v1/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })).status).toBe(204);
      await subscription.until(10_000, 20_000);
      expect(performance.now() - loggedOut).toBeLessThan(1_000);
      expect(subscription.events.length).toBeGreaterThan(0);
      expect(subscription.outcome().error).toMatchObject({ code: 4401 });
    } finally {
      await subscription.close();
    }
  });

  it('delivers to a contentEvents subscriber on the gateway an event committed by the worker process, filtered by what it may read', async () => {
    const worker = services.at(-1)!;
    const open = await newFolder(gateway, 'split-events');
    const hidden = await newFolder(gateway, 'split-hidden');
    expect((await call(`${gateway.contentBase}/folder/${hidden.id}/acl?sessionId=${gateway.adminSession}`, json('PUT', { inherit: false, entries: [] }))).status).toBe(200);
    const session = await gateway.createUserSession('split-subscriber');
    const live = await openSubscription<{ contentEvents: { type: string; entryId: string; details: Record<string, unknown> } }>(
      gateway,
      'subscription { contentEvents(repository: "default") { type entryId details } }',
      { session },
    );
    try {
      await untilLive(worker, live, open.id);
      await commitEvents(worker, [{ type: 'ENTRY_UPDATED', entryId: hidden.id, details: { from: 'worker' } }]);
      await commitEvents(worker, [{ type: 'ENTRY_TAGGED', entryId: open.id, details: { from: 'worker' } }]);
      await expect.poll(() => live.events.some((event) => event.data?.contentEvents.type === 'ENTRY_TAGGED')).toBe(true);
      const fromWorker = live.events.map((event) => event.data!.contentEvents).filter((event) => event.details['from'] === 'worker');
      expect(fromWorker).toEqual([{ type: 'ENTRY_TAGGED', entryId: open.id, details: { from: 'worker' } }]);
    } finally {
      await live.close();
    }
  });

  it('counts failed logins per client behind the gateway, not per gateway', async () => {
    const admin = services[1]!;
    const authenticate = (client: string, user: string) =>
      fetch(`${admin.baseUrl}/graphql`, {
        method: 'POST',
        // what the gateway forwards: the caller's address, taken from its socket
        headers: { 'content-type': 'application/json', 'x-client-address': client },
        body: JSON.stringify({ query: `mutation { authenticate(user: "${user}", password: "wrong-password") }` }),
      }).then(async (r) => ((await r.json()) as { errors: { extensions: { status: number } }[] }).errors[0]!.extensions.status);
    // one after the other: a burst would meet the password-hashing queue's 503 first
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push(await authenticate('198.51.100.7', `guess-${i}`));
    expect(statuses.every((status) => status === 401)).toBe(true);
    expect(await authenticate('198.51.100.7', 'guess-30')).toBe(429);
    // another client behind the same gateway is not locked out
    expect(await authenticate('203.0.113.9', 'guess-31')).toBe(401);
  }, 120_000); // 32 password hashes in a row: seconds on a loaded machine

  it('refuses a number JSON cannot carry in GraphQL variables (1e309), which the gateway would forward as null', async () => {
    const content = await newContent(gateway, { name: 'finite.txt', properties: { a: 1 } });
    const mutation = `mutation($input: UpdateContentInput!) { updateContent(repository: "default", id: "${content.id}", input: $input) { properties } }`;
    // written by hand: JSON.stringify cannot write 1e309
    const body = `{"query":${JSON.stringify(mutation)},"variables":{"input":{"properties":{"a":1e309}}}}`;
    for (const accept of ['application/json', 'text/event-stream']) {
      const response = await fetch(`${gateway.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${gateway.adminSession}` },
        body,
      });
      const text = await response.text();
      expect(text).toMatch(/"reasonCode":"illegalArguments"/);
      expect(text).toMatch(/out of range/);
    }
    expect((await call(`${gateway.contentBase}/content/${content.id}?sessionId=${gateway.adminSession}`)).body.properties).toEqual({ a: 1 });
  });

  it('does not serve the gateway from a subgraph process', async () => {
    const rest = await call(`${services[0]!.contentBase}/home?sessionId=${gateway.adminSession}`);
    expect(rest).toMatchObject({ status: 404, body: { _type: 'svc.model.error.ErrorResponse', reasonCode: 'notFound' } });
  });
});
