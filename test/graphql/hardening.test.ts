import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newFolder } from '../helpers/entries.js';
import { call, openSubscription, startTestService, type TestService } from '../helpers/service.js';

/** Issue 11 (hardening) as seen from a client of /graphql: cost and size bounds, CORS, CSRF, session ends, switches. */
let service: TestService;
let guarded: TestService;
const metricsToken = 'metrics-token-for-tests-0123456789';
const allowedOrigin = 'https://app.example.com';

beforeAll(async () => {
  [service, guarded] = await Promise.all([
    startTestService({ GRAPHQL_MAX_RESULT_ITEMS: '150', SUBSCRIPTION_SESSION_CHECK_SECONDS: '1' }),
    startTestService({ CORS_ORIGINS: `${allowedOrigin}, http://localhost:3000`, METRICS_TOKEN: metricsToken, GRAPHQL_INTROSPECTION: 'false' }),
  ]);
});
afterAll(() => Promise.all([service?.stop(), guarded?.stop()]));

const post = (target: TestService, body: unknown, headers: Record<string, string> = {}) =>
  call(`${target.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.adminSession}`, ...headers },
    body: JSON.stringify(body),
  });

describe('GraphQL cost counts lists by their size', () => {
  let parentId: string;
  beforeAll(async () => {
    parentId = (await newFolder(service, 'hundred'))['id'];
    for (let i = 0; i < 100; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => newFolder(service, `sub-${i + j}`, parentId)));
    }
  });

  // the query of the issue: three levels of children(limit: 1000), each level's entries back to the parent
  const nested = (limit: string) =>
    `folder(repository: "default", id: $id) { children(options: {limit: ${limit}}) { entries { ... on Folder { parent { children(options: {limit: ${limit}}) { entries { ... on Folder { parent { children(options: {limit: ${limit}}) { entries { id } } } } } } } } } } }`;

  it('refuses the nested children query, aliased 10 times, with a 400 cost error while answering other requests', async () => {
    const aliased = Array.from({ length: 10 }, (_, i) => `a${i}: ${nested('1000')}`).join(' ');
    const started = performance.now();
    const [refused, ...health] = await Promise.all([
      post(service, { query: `query($id: ID!) { ${aliased} }`, variables: { id: parentId } }, { accept: 'application/graphql-response+json' }),
      ...Array.from({ length: 5 }, () => call(`${service.baseUrl}/healthz`)),
    ]);
    expect(refused.status).toBe(400);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors[0]).toMatchObject({
      message: expect.stringMatching(/cost/i),
      extensions: { code: 'COST_ESTIMATED_TOO_EXPENSIVE', reasonCode: 'illegalArguments', status: 400, limit: 'cost', max: 100_000 },
    });
    expect(health.map((h) => h.status)).toEqual([200, 200, 200, 200, 200]);
    // refused before anything ran (it took 57 s and 1.4 GB before)
    expect(performance.now() - started).toBeLessThan(5_000);
    expect((await call(`${service.baseUrl}/healthz`)).status).toBe(200);
  });

  it('counts a limit given by a variable, and one level alone at its limit', async () => {
    const byVariable = await post(service, {
      query: `query($id: ID!, $limit: Int) { ${nested('$limit')} }`,
      variables: { id: parentId, limit: 1000 },
    });
    expect(byVariable.body.errors?.[0]?.extensions).toMatchObject({ limit: 'cost', reasonCode: 'illegalArguments' });
    // a limit over the maximum the field accepts counts as that maximum (1000), not more
    const oneLevel = await post(service, {
      query: 'query($id: ID!) { folder(repository: "default", id: $id) { children(options: {limit: 5000000}) { count entries { id ... on Folder { parent { id } } } } } }',
      variables: { id: parentId },
    });
    expect(oneLevel.body.errors?.[0]?.extensions?.['limit']).not.toBe('cost');
    // small limits nested are fine
    const small = await post(service, { query: `query($id: ID!) { ${nested('3')} }`, variables: { id: parentId } });
    expect(small.body.errors).toBeUndefined();
    expect(small.body.data.folder.children.entries).toHaveLength(3);
  });

  it('refuses more than 10 aliases: pages of 1000 entries cannot be multiplied into a response that stalls the service', async () => {
    const pages = (n: number) =>
      Array.from({ length: n }, (_, i) => `p${i}: folder(repository: "default", id: $id) { children(options: {limit: 1000}) { entries { id ... on Folder { parent { id } } } } }`).join(' ');
    // 10 aliases: within the bounds (and then over this service's small item budget, 150)
    const within = await post(service, { query: `query($id: ID!) { ${pages(10)} }`, variables: { id: parentId } });
    expect(within.body.errors?.[0]?.extensions?.['limit']).not.toBe('aliases');
    const over = await post(service, { query: `query($id: ID!) { ${pages(11)} }`, variables: { id: parentId } });
    expect(over.body.errors?.[0]?.extensions).toMatchObject({ limit: 'aliases', reasonCode: 'illegalArguments', status: 400 });
  });

  it('cuts a response over the list-item budget off with an error instead of building it', async () => {
    const page = (alias: string) => `${alias}: folder(repository: "default", id: $id) { children(options: {limit: 100}) { entries { id } } }`;
    const within = await post(service, { query: `query($id: ID!) { ${page('a')} }`, variables: { id: parentId } });
    expect(within.body.errors).toBeUndefined();
    expect(within.body.data.a.children.entries).toHaveLength(100);
    // 200 entries > GRAPHQL_MAX_RESULT_ITEMS=150
    const over = await post(service, { query: `query($id: ID!) { ${page('a')} ${page('b')} }`, variables: { id: parentId } });
    expect(over.body.errors?.[0]).toMatchObject({ extensions: { code: 'RESULT_TOO_LARGE', reasonCode: 'tooLarge', status: 413, max: 150 } });
    const entries = [over.body.data?.a?.children?.entries, over.body.data?.b?.children?.entries].filter(Boolean);
    expect(entries.flat().length).toBeLessThanOrEqual(150);
  });
});

describe('CORS and CSRF on /graphql', () => {
  const query = JSON.stringify({ query: '{ __typename }' });

  it('gives no cross-origin access by default: no echo of the origin, never null, no credentials', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const preflight = await call(`${service.baseUrl}/graphql`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
      });
      const actual = await call(`${service.baseUrl}/graphql`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: query });
      for (const response of [preflight, actual]) {
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
        expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      }
    }
  });

  it('allows the origins CORS_ORIGINS lists, without credentials, and no other', async () => {
    const preflight = await call(`${guarded.baseUrl}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: allowedOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const allowed = await call(`${guarded.baseUrl}/graphql`, { method: 'POST', headers: { origin: allowedOrigin, 'content-type': 'application/json' }, body: query });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
    for (const origin of ['https://evil.example', 'null', 'https://app.example.com.evil.example']) {
      const other = await call(`${guarded.baseUrl}/graphql`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: query });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('refuses the POSTs a browser sends cross-site without a preflight (form, multipart, text/plain): the mutation does not run', async () => {
    const mutation = 'mutation { createFolder(repository: "default", input: {name: "csrf"}) { id } }';
    const form = new FormData();
    form.set('query', mutation);
    const attempts: RequestInit[] = [
      { body: new URLSearchParams({ query: mutation }) },
      { body: form },
      { headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: mutation }) },
    ];
    for (const attempt of attempts) {
      const response = await call(`${service.baseUrl}/graphql`, {
        method: 'POST',
        ...attempt,
        headers: { authorization: `Bearer ${service.adminSession}`, origin: 'https://evil.example', ...(attempt.headers as Record<string, string>) },
      });
      expect(response.status).toBe(415);
      expect(response.body.errors[0]).toMatchObject({ extensions: { reasonCode: 'unsupportedMediaType', status: 415 } });
    }
    const home = await service.graphql<{ home: { entries: { name: string }[] } }>('{ home(repository: "default") { entries { name } } }');
    expect(home.data!.home.entries.map((e) => e.name)).not.toContain('csrf');
  });

  it('takes a POST as application/json only, and says so in the body of every refusal, with a reason code', async () => {
    const mutation = 'mutation { createFolder(repository: "default", input: {name: "not-json"}) { id } }';
    for (const type of ['application/graphql', 'application/jsonx', '*/*', 'application/graphql-response+json']) {
      const refused = await call(`${service.baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.adminSession}`, 'content-type': type },
        body: type === 'application/graphql' ? mutation : JSON.stringify({ query: mutation }),
      });
      expect(refused.status, type).toBe(415);
      expect(refused.body.errors[0], type).toMatchObject({ extensions: { reasonCode: 'unsupportedMediaType', status: 415 } });
    }
    // what yoga refuses before GraphQL runs carries a reason code too
    const noQuery = await call(`${service.baseUrl}/graphql?variables=%7B%7D`);
    expect(noQuery.body.errors[0]).toMatchObject({ message: 'Must provide query string.', extensions: { reasonCode: 'illegalArguments', status: 400 } });
    const put = await call(`${service.baseUrl}/graphql`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(put.status).toBe(405);
    expect(put.body.errors[0].extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 405 });
    const home = await service.graphql<{ home: { entries: { name: string }[] } }>('{ home(repository: "default") { entries { name } } }');
    expect(home.data!.home.entries.map((e) => e.name)).not.toContain('not-json');
  });

  it('gives a reason code and status to every refusal of a JSON POST: a batch, bad JSON, a query that is no string, bad variables, no operation to run', async () => {
    const bodies = [
      '[{"query":"{ __typename }"}]',
      '{"query":',
      '{}',
      '{"query":5}',
      '{"query":"{ __typename }","variables":[1]}',
      '{"query":"{ __typename }","extensions":[1]}',
      '{"query":"query A { __typename } query B { __typename }"}',
      '{"query":"{ __typename }","operationName":"C"}',
      '{"query":"subscription { health { status } }"}',
    ];
    for (const body of bodies) {
      const answer = await call(`${service.baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.adminSession}`, 'content-type': 'application/json' },
        body,
      });
      expect(answer.body.errors?.[0]?.extensions, body).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    }
  });
});

describe('operations per graphql-ws connection', () => {
  it('takes at most 100 under way on one connection; the 101st is refused with 429 tooManyRequests, and taken once one completes', async () => {
    const { createClient } = await import('graphql-ws');
    const { default: WebSocket } = await import('ws');
    const client = createClient({
      url: `${service.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${service.adminSession}` },
      retryAttempts: 0,
      lazy: false,
    });
    const subscribe = () => {
      let settle: (outcome: { event?: unknown; error?: unknown }) => void = () => undefined;
      const first = new Promise<{ event?: unknown; error?: unknown }>((resolve) => (settle = resolve));
      const stop = client.subscribe({ query: 'subscription { healthChanges(intervalMs: 60000) { status } }' }, {
        next: (event) => settle({ event }),
        error: (error) => settle({ error }),
        complete: () => undefined,
      });
      return { first, stop };
    };
    try {
      const open = Array.from({ length: 100 }, subscribe);
      for (const subscription of open) expect((await subscription.first).event).toBeDefined();
      const refused = await subscribe().first;
      expect((refused.error as { extensions?: unknown }[])[0]).toMatchObject({ extensions: { reasonCode: 'tooManyRequests', status: 429 } });
      open[0]!.stop();
      // the completion reaches the server a moment later (more than a fixed pause on a loaded machine): until
      // it is counted off, a subscribe is still refused
      let again = await subscribe().first;
      for (const until = Date.now() + 10_000; again.error !== undefined && Date.now() < until; again = await subscribe().first) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(again.event).toBeDefined();
    } finally {
      await client.dispose();
    }
  }, 30_000);

  it('closes a connection whose message is over 2 MiB with 1009, without an internal error on the console', async () => {
    const { default: WebSocket } = await import('ws');
    const { vi } = await import('vitest');
    const consoleError = vi.spyOn(console, 'error');
    try {
      const socket = new WebSocket(`${service.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { padding: 'x'.repeat(3 * 1024 * 1024) } }));
      expect(await closed).toBe(1009);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });
});

describe('subscriptions end with their session', () => {
  const subscription = 'subscription { healthChanges(intervalMs: 1000) { status } }';

  it('closes the graphql-ws and SSE subscriptions of a session within a second of its logout', async () => {
    const session = await service.createUserSession('leaving');
    const other = await service.createUserSession('staying');
    // graphql-ws: collects until the server ends it
    const ws = await openSubscription(service, subscription, { session });
    const stays = await openSubscription(service, subscription, { session: other });
    try {
      const sse = await fetch(`${service.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${session}` },
        body: JSON.stringify({ query: subscription }),
      });
      const reader = sse.body!.getReader();
      let sseStarted!: () => void;
      const sseUnderWay = new Promise<void>((resolve) => (sseStarted = resolve));
      const sseEnded = (async () => {
        let text = '';
        for (;;) {
          try {
            const { value, done } = await reader.read();
            if (done) break;
            text += new TextDecoder().decode(value);
            if (text.includes('healthChanges')) sseStarted();
          } catch {
            break; // the connection was cut
          }
        }
        sseStarted();
        return { at: performance.now(), text };
      })();
      // all three under way (their first event came) before the logout: a fixed pause was not always enough
      // on a loaded machine, and a subscription that had not started would not be the one this ends
      await Promise.all([ws.until(1, 20_000), stays.until(1, 20_000), sseUnderWay]);
      const loggedOut = performance.now();
      expect((await call(`${service.baseUrl}/api/v1/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })).status).toBe(204);
      const [wsOutcome, sseOutcome] = await Promise.all([ws.until(10_000, 20_000).then(() => ({ ...ws.outcome(), at: performance.now() })), sseEnded]);
      expect(ws.events.length).toBeGreaterThan(0);
      expect(wsOutcome.error).toMatchObject({ code: 4401 });
      expect(wsOutcome.at - loggedOut).toBeLessThan(1_000);
      expect(sseOutcome.text).toContain('healthChanges');
      expect(sseOutcome.at - loggedOut).toBeLessThan(1_000);
      // another session's subscription goes on
      await expect(stays.until(10_000, 4_000)).rejects.toThrow(/no 10000 events/);
    } finally {
      await Promise.all([ws.close(), stays.close()]);
    }
  });

  it('re-verifies open connections: a session removed behind the gateway ends them too', async () => {
    const session = await service.createUserSession('expiring');
    const ws = await openSubscription(service, subscription, { session });
    try {
      // open (its first event came) before the session goes: after a fixed pause on a loaded machine it might not
      // be yet, and then its connection_init would be what is refused, not an open connection
      await ws.until(1, 20_000);
      // the session expires (no notification): the periodic check (every second here) finds it gone
      const { sql } = await import('../helpers/entries.js');
      await sql(service, "update user_session set expires_at = now() where user_name = 'expiring'");
      await ws.until(10_000, 30_000);
      expect(ws.outcome().error).toMatchObject({ code: 4401 });
    } finally {
      await ws.close();
    }
  }, 60_000);
});

describe('switches and hints', () => {
  // the page compressed with brotli and gzip on its first requests: 12 s of vitest's 30 at load 15
  it('serves GraphiQL compressed, cacheable and revalidated with an ETag', { timeout: 60_000 }, async () => {
    const response = await fetch(`${service.baseUrl}/graphql`, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(Number(response.headers.get('content-length'))).toBeLessThan(3 * 1024 * 1024);
    expect(await response.text()).toContain('<div id="root">'); // fetch decodes brotli
    const etag = response.headers.get('etag')!;
    const gzip = await fetch(`${service.baseUrl}/graphql`, { headers: { accept: 'text/html', 'accept-encoding': 'gzip' } });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    await gzip.arrayBuffer();
    const revalidated = await fetch(`${service.baseUrl}/graphql`, { headers: { accept: 'text/html', 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
  });

  it("says in /graphql's 401 what it accepts", async () => {
    const anonymous = await call(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { userName } }' }),
    });
    expect(anonymous.body.errors[0].message).toMatch(/Authorization: Bearer <session id>/);
    expect(anonymous.body.errors[0].message).toMatch(/connection_init/);
    // not REST's sessionId, which /graphql does not take
    expect(anonymous.body.errors[0].message).not.toMatch(/sessionId/);
    expect(anonymous.body.errors[0].extensions).toMatchObject({ reasonCode: 'notAuthenticated', status: 401 });
    // a wrong password is no question of sending a session
    const login = await call(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { authenticate(user: "admin", password: "wrong-password") }' }),
    });
    expect(login.body.errors[0].message).toBe('unknown user or wrong password');
    // REST answers keep their own message
    const rest = await call(`${service.contentBase}/home`);
    expect(JSON.stringify(rest.body)).not.toMatch(/connection_init/);
  });

  it('refuses a fragment bomb (each fragment spreads the next twice: 3 KB, 2^60 fields) at once, without a session too, and answers the same shape within the bound', async () => {
    const fanOut = (levels: number) => {
      let query = '{ home(repository: "default") { ...E0 } }';
      for (let i = 0; i < levels; i++) query += ` fragment E${i} on EntriesPage { ...E${i + 1} ...E${i + 1} }`;
      return `${query} fragment E${levels} on EntriesPage { count }`;
    };
    const started = Date.now();
    const bomb = await call(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: fanOut(60) }),
    });
    expect(bomb.status).toBe(400);
    expect(bomb.body.errors[0]).toMatchObject({
      message: 'The operation has more than 10^15 fields once its fragments are expanded; at most 10000.',
      extensions: { limit: 'expandedFields', reasonCode: 'illegalArguments', status: 400 },
    });
    // 2^24 fields took 7 s before this bound; the refusal is immediate
    expect(Date.now() - started).toBeLessThan(2_000);
    const over = await post(service, { query: fanOut(14) });
    expect(over.body.errors[0]).toMatchObject({ message: 'The operation has 16385 fields once its fragments are expanded; at most 10000.', extensions: { actual: 16385 } });
    const within = await post(service, { query: fanOut(8) });
    expect(within.body).toEqual({ data: { home: { count: expect.any(Number) } } });
  });

  it('answers at most 3 introspection fields in one document, without a session too (30 aliased __schema were 3.7 MB a request)', async () => {
    const schemaFields = (n: number) => Array.from({ length: n }, (_, i) => `s${i}: __schema { types { name fields { name } } }`).join(' ');
    const ask = (query: string) => call(`${service.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const full = await ask(getIntrospectionQuery());
    expect(full.body.data.__schema.types.length).toBeGreaterThan(10);
    expect((await ask(`{ ${schemaFields(3)} }`)).body.errors).toBeUndefined();
    const refused = await ask(`{ ${schemaFields(4)} }`);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors[0]).toMatchObject({ message: expect.stringMatching(/at most 3 introspection fields/), extensions: { limit: 'introspection', reasonCode: 'illegalArguments', status: 400 } });
  });

  it('answers a GET whose variables or extensions are not a JSON object with a 400, not a 500', async () => {
    const malformed: Record<string, string>[] = [{ variables: '{bad' }, { extensions: '{bad' }, { variables: '[1]' }, { variables: '3' }];
    for (const parameters of malformed) {
      const answer = await call(`${service.baseUrl}/graphql?${new URLSearchParams({ query: '{ __typename }', ...parameters })}`);
      expect(answer.status, JSON.stringify(parameters)).toBe(400);
      expect(answer.body.errors[0]).toMatchObject({ message: expect.stringMatching(/must be a JSON object/), extensions: { reasonCode: 'illegalArguments', status: 400 } });
    }
    expect((await call(`${service.baseUrl}/graphql?${new URLSearchParams({ query: '{ __typename }', variables: '{}' })}`)).status).toBe(200);
  });

  it('answers introspection unless GRAPHQL_INTROSPECTION=false', async () => {
    const open = await post(service, { query: getIntrospectionQuery() });
    expect(open.body.errors).toBeUndefined();
    expect(open.body.data.__schema.queryType.name).toBe('Query');
    const closed = await post(guarded, { query: '{ __schema { queryType { name } } }' });
    expect(closed.body.data ?? null).toBeNull();
    expect(closed.body.errors[0].message).toMatch(/introspection/i);
    expect((await post(guarded, { query: '{ me { userName } }' })).body.data).toEqual({ me: { userName: 'admin' } });
  });

  it('serves /metrics openly, or only with METRICS_TOKEN as Bearer when it is set', async () => {
    expect((await call(`${service.baseUrl}/metrics`)).status).toBe(200);
    const refused = await call(`${guarded.baseUrl}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await call(`${guarded.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status).toBe(401);
    const allowed = await call(`${guarded.baseUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('http_request_duration_seconds');
  });
});
