import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, subscriptionEvents, type TestService } from '../helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const healthSubscription = 'subscription { healthChanges(intervalMs: 1000) { status database contentStorage checkedAt } }';

describe('GraphQL through the gateway at {base_url}/graphql', () => {
  it('federates the three subgraphs in one request', async () => {
    const result = await service.graphql<{ health: { status: string }; me: { userName: string }; home: { count: number } }>(
      '{ health { status } me { userName } home(repository: "default") { count } }',
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ health: { status: 'ok' }, me: { userName: 'admin' }, home: { count: 0 } });
  });

  it('passes the reason code and status of a domain error through', async () => {
    const result = await service.graphql('{ folder(repository: "default", id: "missing") { id } }');
    expect(result.errors?.[0]?.message).toContain("folder 'missing' not found");
    expect(result.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    const anonymous = await service.graphql('{ me { userName } }', {}, '');
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notAuthenticated', status: 401 });
  });

  it('delivers a subscription over graphql-ws with the session in connection_init', async () => {
    const { events: received } = await subscriptionEvents<{ healthChanges: { status: string; database: boolean } }>(service, healthSubscription, 3);
    expect(received.every((event) => event.errors === undefined)).toBe(true);
    const events = received.map((event) => event.data!.healthChanges);
    expect(events).toEqual([
      expect.objectContaining({ status: 'ok', database: true }),
      expect.objectContaining({ status: 'ok', database: true }),
      expect.objectContaining({ status: 'ok', database: true }),
    ]);
  });

  it('refuses a graphql-ws connection without a valid session', async () => {
    const { events, error: outcome } = await subscriptionEvents(service, healthSubscription, 1, { session: 'not-a-session' });
    expect(events).toEqual([]);
    expect(outcome).toMatchObject({ code: 4403 });
  });

  it('delivers a subscription over SSE', async () => {
    const controller = new AbortController();
    const response = await fetch(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${service.adminSession}` },
      body: JSON.stringify({ query: healthSubscription }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    while ((text.match(/"healthChanges"/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    expect((text.match(/"status":"ok"/g) ?? []).length).toBeGreaterThanOrEqual(2);
  });

  it('gives every error a reasonCode and status: parse, validation and variables, over HTTP, graphql-ws and SSE', async () => {
    const badRequest = { reasonCode: 'illegalArguments', status: 400 };
    for (const query of ['{ health { status ', '{ nosuch }', 'query($i: Int!) { health { status } }']) {
      expect((await service.graphql(query)).errors?.[0]?.extensions, query).toMatchObject(badRequest);
    }
    // a value only the subgraph can read (a JSON object scalar) refused there: the client's, not an outage (was a 503)
    for (const properties of [[1, 2], 5, 'text']) {
      const refused = await service.graphql('mutation($p: JSONObject) { createFolder(repository: "default", input: { name: "json-check", properties: $p }) { id } }', { p: properties });
      expect(refused.errors?.[0]?.extensions, JSON.stringify(properties)).toMatchObject(badRequest);
    }
    const subscriptions: [string, Record<string, unknown>][] = [
      ['subscription { nosuch }', badRequest],
      ['subscription($i: Int!) { healthChanges(intervalMs: $i) { status } }', badRequest],
      // a domain error thrown where a subscription starts, not masked as a 500
      ['subscription { healthChanges(intervalMs: 1) { status } }', badRequest],
      ['subscription { jobStatus(repository: "default", jobId: "nope") { state } }', { reasonCode: 'notFound', status: 404 }],
    ];
    for (const [query, expected] of subscriptions) {
      const { events } = await subscriptionEvents(service, query, 1);
      expect((events[0]?.errors?.[0] as { extensions: unknown }).extensions, `graphql-ws: ${query}`).toMatchObject({ reasonCode: expected['reasonCode'], status: expected['status'] });
      const response = await fetch(`${service.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${service.adminSession}` },
        body: JSON.stringify({ query }),
      });
      const event = (await response.text()).split('\n').find((line) => line.startsWith('data: {'));
      expect(JSON.parse(event!.slice('data: '.length)).errors[0].extensions, `SSE: ${query}`).toMatchObject({ reasonCode: expected['reasonCode'], status: expected['status'] });
    }
  });

  it('types every id as ID: a chronicle id read from one answer is a variable of the next', async () => {
    const created = await service.graphql<{ createFolder: { id: string } }>('mutation { createFolder(repository: "default", input: { name: "id-types" }) { id } }');
    const found = await service.graphql<{ searchByProperties: { entries: { id: string; chronicalId: string }[] } }>(
      'query($id: ID!) { searchByProperties(repository: "default", filter: { chronicalId: $id }) { entries { id chronicalId } } }',
      { id: created.data!.createFolder.id },
    );
    expect(found.errors).toBeUndefined();
    expect(found.data!.searchByProperties.entries).toEqual([{ id: created.data!.createFolder.id, chronicalId: created.data!.createFolder.id }]);
  });

  it('bounds query depth and alias amplification', async () => {
    const deep = await service.graphql(
      '{ home(repository: "default") { entries { ... on Content { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { predecessor { id } } } } } } } } } } } } } } }',
    );
    expect(deep.errors?.[0]?.message).toMatch(/depth/i);
    const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: health { status }`).join(' ');
    const amplified = await service.graphql(`{ ${aliases} }`);
    expect(amplified.errors?.[0]?.message).toMatch(/alias/i);
    expect(amplified.data ?? null).toBeNull();
  });

  it('serves GraphiQL to browsers without any external host', async () => {
    const response = await fetch(`${service.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html.toLowerCase()).toContain('graphiql');
    // nothing is loaded from elsewhere: no script, style sheet or font from a remote URL
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import\s+url\(\s*["']?(https?:)?\/\//i);
  });
});

describe('graphql-http server audits', () => {
  it('passes every audit', async () => {
    const audits = serverAudits({ url: `${service.baseUrl}/graphql` });
    const failures: string[] = [];
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== 'ok') failures.push(`${audit.name}: ${result.status} ${'reason' in result ? result.reason : ''}`);
    }
    expect(audits.length).toBeGreaterThan(50);
    expect(failures).toEqual([]);
  });
});
