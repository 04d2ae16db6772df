import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@apollo/composition';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, parse, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { serverAudits } from 'graphql-http';
import { createClient, type Client } from 'graphql-ws';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import net from 'node:net';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createGateway, type Gateway, type InProcessSubgraph } from './gateway.js';
import { SingleSubgraphPlanner } from './single-subgraph.js';
import { startSubgraphServer, type StartedSubgraphServer } from './subgraph-server.js';

// ---------------------------------------------------------------------------------------------
// Two toy Federation 2 subgraphs: `content` owns Item and a Subscription; `admin` extends Item.

interface ToyContext {
  authorization: string | null;
  requestId: string | null;
  address: string | null;
}

const createContext = (headers: Headers): ToyContext => ({
  authorization: headers.get('authorization'),
  requestId: headers.get('x-request-id'),
  address: headers.get('x-client-address'),
});

const items = [
  { id: '1', name: 'one' },
  { id: '2', name: 'two' },
];

function contentSchema(): GraphQLSchema {
  return buildSubgraphSchema([{
    typeDefs: parse(/* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Item @key(fields: "id") {
        id: ID!
        name: String!
        children: [Item!]!
      }
      type Query {
        items: [Item!]!
        item(id: ID!): Item
        whoami: String
        requestId: String
        clientAddress: String
        fail(code: String!): String
        boom: String
      }
      type Tick {
        n: Int!
        item: Item!
      }
      type Subscription {
        ticks(count: Int!): Tick!
      }
    `),
    resolvers: {
      Query: {
        items: () => items,
        item: (_: unknown, { id }: { id: string }) => items.find((i) => i.id === id) ?? null,
        whoami: (_: unknown, __: unknown, ctx: ToyContext) => ctx.authorization,
        requestId: (_: unknown, __: unknown, ctx: ToyContext) => ctx.requestId,
        clientAddress: (_: unknown, __: unknown, ctx: ToyContext) => ctx.address,
        fail: (_: unknown, { code }: { code: string }) => {
          throw new GraphQLError('no such thing', { extensions: { code, reasonCode: 'notFound', status: 404 } });
        },
        boom: () => {
          throw new Error('secret internals');
        },
      },
      Item: {
        __resolveReference: (ref: { id: string }) => items.find((i) => i.id === ref.id),
        children: () => items,
      },
      Subscription: {
        ticks: {
          subscribe: async function* (_: unknown, { count }: { count: number }, ctx: ToyContext) {
            if (!ctx.authorization) throw new GraphQLError('no session', { extensions: { code: 'notAuthenticated', status: 401 } });
            for (let n = 1; n <= count; n++) {
              await new Promise((r) => setTimeout(r, 5));
              yield { ticks: { n, item: items[n % 2]! } };
            }
          },
        },
      },
    } as never,
  }]);
}

function adminSchema(): GraphQLSchema {
  return buildSubgraphSchema([{
    typeDefs: parse(/* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Item @key(fields: "id") {
        id: ID!
        owner: String!
        seenAuthorization: String
      }
      type Query {
        adminPing: String
      }
    `),
    resolvers: {
      Query: { adminPing: () => 'pong' },
      Item: {
        __resolveReference: (ref: { id: string }, ctx: ToyContext) => ({ id: ref.id, owner: `owner-${ref.id}`, seenAuthorization: ctx.authorization }),
      },
    } as never,
  }]);
}

function compose(subgraphs: { name: string; schema: GraphQLSchema; url: string }[]): string {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(printSubgraphSchema(s.schema)) })));
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result.supergraphSdl;
}

/** The two test subgraphs composed with their URLs (split mode; one URL for both when only the address matters). */
const supergraphAt = (contentUrl: string, adminUrl = contentUrl) =>
  compose([
    { name: 'content', schema: contentSchema(), url: contentUrl },
    { name: 'admin', schema: adminSchema(), url: adminUrl },
  ]);

const limits = { maxDepth: 6, maxAliases: 5, maxCost: 500 };
const logger = pino({ level: 'silent' });
const verifyConnection = async (authorization: string | undefined) => authorization === 'Bearer good';

async function serve(gateway: Gateway): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url?.split('?')[0] === '/graphql') {
      gateway.handle(req, res).catch((e: unknown) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  gateway.attachWebSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/graphql`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function post(url: string, query: string, headers: Record<string, string> = {}, variables?: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ExecutionResult & { errors?: { message: string; extensions?: Record<string, unknown> }[] } };
}

function wsClient(url: string, authorization?: string): Client {
  return createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: authorization ? { authorization } : {},
  });
}

async function collect<T>(iterable: AsyncIterable<T>, timeoutMs = 3000): Promise<T[]> {
  const out: T[] = [];
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs).unref());
  await Promise.race([
    (async () => {
      for await (const value of iterable) out.push(value);
    })(),
    timer,
  ]);
  return out;
}

/** Reads an SSE response to its end (yoga sends `event: complete`) and returns the `next` payloads. */
async function readSse(response: Response, timeoutMs = 3000): Promise<ExecutionResult[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.includes('event: complete')) break;
  }
  await reader.cancel().catch(() => {});
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: next'))
    .map((block) => JSON.parse(block.split('\n').find((l) => l.startsWith('data:'))!.slice(5)) as ExecutionResult);
}

const FEDERATED = /* GraphQL */ `
  {
    items {
      id
      name
      owner
      seenAuthorization
    }
  }
`;

// ---------------------------------------------------------------------------------------------

describe('gateway (embedded: subgraphs in-process)', () => {
  let gateway: Gateway;
  let http: Awaited<ReturnType<typeof serve>>;
  let subgraphs: InProcessSubgraph[];
  let supergraphSdl: string;

  beforeAll(async () => {
    subgraphs = [
      { name: 'content', schema: contentSchema(), createContext },
      { name: 'admin', schema: adminSchema(), createContext },
    ];
    supergraphSdl = compose(subgraphs.map((s) => ({ ...s, url: `http://${s.name}.invalid/graphql` })));
    gateway = createGateway({ supergraphSdl, subgraphs, graphqlEndpoint: '/graphql', limits, logger, verifyConnection });
    http = await serve(gateway);
    await gateway.ready();
  });

  afterAll(async () => {
    await http?.close();
    await gateway?.dispose();
  });

  it('plans a query across both subgraphs and forwards authorization and x-request-id', async () => {
    const res = await post(http.url, FEDERATED + ' query Q { requestId whoami clientAddress }', { authorization: 'Bearer abc', 'x-request-id': 'req-1', 'x-client-address': 'spoofed' });
    expect(res.status).toBe(400); // two anonymous/named operations without operationName
    const ok = await post(http.url, `{ items { id name owner seenAuthorization } whoami requestId clientAddress }`, {
      authorization: 'Bearer abc',
      'x-request-id': 'req-1',
      'x-client-address': 'spoofed',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data).toEqual({
      items: [
        { id: '1', name: 'one', owner: 'owner-1', seenAuthorization: 'Bearer abc' },
        { id: '2', name: 'two', owner: 'owner-2', seenAuthorization: 'Bearer abc' },
      ],
      whoami: 'Bearer abc',
      requestId: 'req-1',
      clientAddress: '127.0.0.1',
    });
    expect(ok.headers.get('x-request-id')).toBe('req-1');

    // a browser request (Origin: CORS) takes the runtime's own HTTP handling instead of the fast path: same answer
    const browser = await post(http.url, `{ items { id owner } whoami requestId }`, { authorization: 'Bearer abc', 'x-request-id': 'req-2', origin: 'http://localhost:3000' });
    expect(browser.status).toBe(200);
    expect(browser.body).toEqual({ data: { items: [{ id: '1', owner: 'owner-1' }, { id: '2', owner: 'owner-2' }], whoami: 'Bearer abc', requestId: 'req-2' } });
    expect(browser.headers.get('x-request-id')).toBe('req-2');
  });

  it('generates a request id when the client sends none', async () => {
    const res = await post(http.url, '{ requestId }');
    const id = (res.body.data as { requestId: string }).requestId;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).toBe(id);
  });

  it('execute() runs in-process with the same planning, forwarding and caching', async () => {
    const headers = new Headers({ authorization: 'Bearer xyz', 'x-request-id': 'rest-1', 'x-client-address': '10.0.0.9' });
    for (let i = 0; i < 3; i++) {
      const result = await gateway.execute({ document: 'query One($id: ID!) { item(id: $id) { name owner seenAuthorization } requestId clientAddress }', variables: { id: '2' }, headers });
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({ item: { name: 'two', owner: 'owner-2', seenAuthorization: 'Bearer xyz' }, requestId: 'rest-1', clientAddress: '10.0.0.9' });
    }
    const invalid = await gateway.execute({ document: '{ nope }', headers });
    expect(invalid.errors?.[0]?.message).toMatch(/Cannot query field "nope"/);
    const syntax = await gateway.execute({ document: '{ items { ', headers });
    expect(syntax.errors?.[0]?.message).toMatch(/Syntax Error/);
    // variables that do not coerce: the client's mistake (400), as REST maps it
    const missing = await gateway.execute({ document: 'query One($id: ID!) { item(id: $id) { name } }', variables: {}, headers });
    expect(missing.errors?.[0]).toMatchObject({ message: expect.stringMatching(/Variable "\$id"/), extensions: { reasonCode: 'illegalArguments', status: 400 } });
  });

  it('runs single-subgraph operations directly with a cached plan, with the answers of the planner', async () => {
    const planner = new SingleSubgraphPlanner(supergraphSdl, new Map(subgraphs.map((s) => [s.name, s.schema])));
    const plan = (query: string, name?: string) => planner.plan(parse(query), name);
    expect(plan('{ items { id name __typename ...F } } fragment F on Item { children { id } }')).toBe('content');
    expect(plan('query A { adminPing }')).toBe('admin');
    expect(plan('{ items { id owner } }')).toBeUndefined(); // entity fields of another subgraph
    expect(plan('{ whoami adminPing }')).toBeUndefined(); // root fields of two subgraphs
    expect(plan('{ __schema { queryType { name } } }')).toBeUndefined(); // introspection is the supergraph's
    expect(plan('{ items { ... on Item { id } } }')).toBe('content');
    expect(plan('subscription { ticks(count: 1) { n } }')).toBeUndefined();
    const doc = parse('{ items { id } }');
    expect(planner.plan(doc)).toBe(planner.plan(doc));

    // differential: the same operations through a gateway that always plans
    const planned = createGateway({ supergraphSdl, subgraphs, graphqlEndpoint: '/graphql', limits, logger, verifyConnection, singleSubgraphShortcut: false });
    try {
      const headers = new Headers({ authorization: 'Bearer d', 'x-request-id': 'diff', 'x-client-address': '10.1.1.1' });
      const cases: [string, Record<string, unknown>?][] = [
        ['{ items { id name alias: name __typename children { id } } whoami requestId clientAddress }'],
        ['query Q($id: ID!) { item(id: $id) { ...F } } fragment F on Item { id name }', { id: '1' }],
        ['query Q($id: ID!) { item(id: $id) { id } }', { id: 'nope' }],
        ['query Q($id: ID!) { item(id: $id) { id } }', {}],
        ['{ fail(code: "NOT_FOUND") items { id } }'],
        ['{ boom }'],
        ['{ adminPing }'],
        ['{ items { id owner } }'],
      ];
      for (const [document, variables] of cases) {
        const direct = await gateway.execute({ document, variables, headers });
        const viaPlanner = await planned.execute({ document, variables, headers });
        expect(JSON.parse(JSON.stringify(direct)), document).toEqual(JSON.parse(JSON.stringify(viaPlanner)));
      }
    } finally {
      await planned.dispose();
    }
  });

  it("runs Hive's subgraph hooks on the fast path and the planner; the shortcut (a documented exception) keeps their effects and has an off switch", async () => {
    const seen: string[] = [];
    const watcher: GatewayPlugin = {
      onSubgraphExecute({ subgraphName, executionRequest }) {
        seen.push(`${subgraphName}:${JSON.stringify(executionRequest.extensions?.['headers'] ?? {})}`);
      },
    };
    const make = (singleSubgraphShortcut: boolean) =>
      createGateway({ supergraphSdl, subgraphs, graphqlEndpoint: '/graphql', limits, logger, verifyConnection, singleSubgraphShortcut, plugins: [watcher] });
    const withShortcut = make(true);
    const withoutShortcut = make(false);
    const served = await serve(withShortcut);
    try {
      // fast path (plain JSON POST), planned across both subgraphs: every call seen, with the propagated headers
      const federated = await post(served.url, '{ items { id owner } }', { authorization: 'Bearer hooks', 'x-request-id': 'hooks-1' });
      expect(federated.body.errors).toBeUndefined();
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.every((call) => call.includes('"authorization":"Bearer hooks"') && call.includes('"x-request-id":"hooks-1"'))).toBe(true);
      // the shortcut: no subgraph hook, but the same forwarded headers, request id and bounds
      seen.length = 0;
      const single = await post(served.url, '{ whoami requestId }', { authorization: 'Bearer hooks', 'x-request-id': 'hooks-2' });
      expect(single.body.data).toEqual({ whoami: 'Bearer hooks', requestId: 'hooks-2' });
      // … also from the runtime's own HTTP handling (a browser request, with an Origin)
      const fromBrowser = await post(served.url, '{ whoami requestId }', { authorization: 'Bearer hooks', 'x-request-id': 'hooks-4', origin: 'http://localhost:3000' });
      expect(fromBrowser.body.data).toEqual({ whoami: 'Bearer hooks', requestId: 'hooks-4' });
      expect(seen).toEqual([]);
      const tooCostly = await post(served.url, '{ items { children { children { children { id } } } } }');
      expect(tooCostly.body.errors?.[0]?.extensions).toMatchObject({ limit: 'cost' });
      // switched off, the same operation goes through the runtime and its hooks
      const planned = await withoutShortcut.execute({ document: '{ whoami requestId }', headers: new Headers({ authorization: 'Bearer hooks', 'x-request-id': 'hooks-3' }) });
      expect(planned.data).toEqual({ whoami: 'Bearer hooks', requestId: 'hooks-3' });
      expect(seen).toEqual(['content:{"authorization":"Bearer hooks","x-request-id":"hooks-3"}']);
    } finally {
      await served.close();
      await withShortcut.dispose();
      await withoutShortcut.dispose();
    }
  });

  it('keeps the extensions of errors thrown by subgraph resolvers (HTTP and execute)', async () => {
    const res = await post(http.url, '{ fail(code: "NOT_FOUND") }');
    expect(res.body.errors?.[0]).toMatchObject({
      message: 'no such thing',
      path: ['fail'],
      extensions: { code: 'NOT_FOUND', reasonCode: 'notFound', status: 404 },
    });
    const direct = await gateway.execute({ document: '{ fail(code: "CONFLICT") }', headers: new Headers() });
    expect(direct.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reasonCode: 'notFound', status: 404 });
  });

  it('masks unexpected subgraph errors', async () => {
    const res = await post(http.url, '{ boom }');
    expect(res.body.errors?.[0]).toMatchObject({ message: 'Unexpected error.', path: ['boom'], extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 } });
    expect(JSON.stringify(res.body)).not.toMatch(/stack|secret internals/);
  });

  it('streams a federated subscription over graphql-ws', async () => {
    const client = wsClient(http.url, 'Bearer good');
    try {
      const events = await collect(client.iterate({ query: 'subscription { ticks(count: 3) { n item { id name owner seenAuthorization } } }' }));
      expect(events.map((e) => e.errors)).toEqual([undefined, undefined, undefined]);
      expect(events.map((e) => (e.data as { ticks: unknown }).ticks)).toEqual([
        { n: 1, item: { id: '2', name: 'two', owner: 'owner-2', seenAuthorization: 'Bearer good' } },
        { n: 2, item: { id: '1', name: 'one', owner: 'owner-1', seenAuthorization: 'Bearer good' } },
        { n: 3, item: { id: '2', name: 'two', owner: 'owner-2', seenAuthorization: 'Bearer good' } },
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('answers an invalid subscription over graphql-ws with the error contract and without yoga\'s internal http extension', async () => {
    const client = wsClient(http.url, 'Bearer good');
    try {
      const [event] = await collect(client.iterate({ query: 'subscription { ticks { n } }' }));
      expect(event?.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
      expect(event?.errors?.[0]?.extensions).not.toHaveProperty('http');
    } finally {
      await client.dispose();
    }
  });

  it('refuses a graphql-ws connection without a valid session', async () => {
    const client = wsClient(http.url, 'Bearer bad');
    try {
      const error = await collect(client.iterate({ query: 'subscription { ticks(count: 1) { n } }' })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as { code?: number })?.code).toBe(4403);
    } finally {
      await client.dispose();
    }
  });

  it('streams a subscription over SSE, and refuses one without a valid session', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer good' },
      body: JSON.stringify({ query: 'subscription { ticks(count: 3) { n item { owner } } }' }),
    });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await readSse(response);
    expect(events.map((e) => (e.data as { ticks: { n: number } }).ticks)).toEqual([
      { n: 1, item: { owner: 'owner-2' } },
      { n: 2, item: { owner: 'owner-1' } },
      { n: 3, item: { owner: 'owner-2' } },
    ]);

    const refused = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { ticks(count: 3) { n } }' }),
    });
    const refusedEvents = await readSse(refused);
    expect(refusedEvents[0]?.errors?.[0]).toMatchObject({ extensions: { reasonCode: 'notAuthenticated', status: 401 } });
  });

  it('rejects operations over the depth, alias and cost bounds', async () => {
    const deep = await post(http.url, '{ items { children { children { children { children { children { id } } } } } } }');
    expect(deep.status).toBe(400);
    expect(deep.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/found 7/), extensions: { limit: 'depth', max: 6, reasonCode: 'illegalArguments', status: 400 } });
    expect(deep.body.data).toBeUndefined();

    const aliases = Array.from({ length: 6 }, (_, i) => `a${i}: adminPing`).join(' ');
    const amplified = await post(http.url, `{ ${aliases} }`);
    expect(amplified.status).toBe(400);
    expect(amplified.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/found 6/), extensions: { limit: 'aliases', max: 5 } });

    // aliases hidden in a fragment spread several times still count once per spread
    const viaFragments = await post(http.url, `{ ...F ...F2 } fragment F on Query { x1: adminPing x2: adminPing x3: adminPing } fragment F2 on Query { ...F }`);
    expect(viaFragments.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/found 6/), extensions: { limit: 'aliases' } });

    // cost: objects cost 1, lists multiply by 10: items 10 × (1 + children 10 × (1 + children 10 × 1)) = 1110; scalars are free
    const costly = await post(http.url, '{ items { children { id name owner seenAuthorization __typename children { id } } } }');
    expect(costly.status).toBe(400);
    expect(costly.body.errors?.[0]).toMatchObject({ extensions: { code: 'COST_ESTIMATED_TOO_EXPENSIVE', limit: 'cost', max: 500, actual: 1110, status: 400 } });
    const affordable = await post(http.url, '{ items { children { id name owner seenAuthorization } } }'); // 10 × (1 + 10) = 110
    expect(affordable.body.errors).toBeUndefined();

    const tokens = await gateway.execute({ document: `{ ${'__typename '.repeat(20_000)} }`, headers: new Headers() });
    expect(tokens.errors?.[0]).toMatchObject({ extensions: { limit: 'tokens' } });

    // within bounds, and GraphiQL's introspection query is not counted against the data bounds
    const fine = await post(http.url, '{ a: adminPing b: adminPing items { children { id } } }');
    expect(fine.body.errors).toBeUndefined();
    const { getIntrospectionQuery } = await import('graphql');
    const introspection = await post(http.url, getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }));
    expect(introspection.body.errors).toBeUndefined();
    // introspection nesting: `__type` counts against the depth, `__schema` subtrees are bounded by graphql-js' MaxIntrospectionDepthRule
    const nested = (n: number) => `{ __type(name: "Item") { ${'ofType { '.repeat(n)}name${' }'.repeat(n)} } }`;
    expect((await post(http.url, nested(3))).body.errors).toBeUndefined();
    const deepIntrospection = await post(http.url, nested(25));
    expect(deepIntrospection.body.errors?.[0]).toMatchObject({ extensions: { limit: 'depth', max: 6 } });
    const cyclic = await post(http.url, `{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }`);
    expect(cyclic.body.errors?.[0]?.message).toMatch(/introspection depth/i);
  });

  it('serves GraphiQL to browsers without any external asset', async () => {
    const response = await fetch(http.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toContain('<div id="root">');
    expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import\s+(url\()?["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|esm\.sh|cdnjs|googleapis/i);
  });

  it('passes the graphql-http server audits', async () => {
    const failures: string[] = [];
    for (const audit of serverAudits({ url: http.url })) {
      const result = await audit.fn();
      if (result.status !== 'ok') failures.push(`${result.status} ${audit.name}: ${result.reason}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('gateway (split: subgraphs over HTTP and graphql-ws)', () => {
  let gateway: Gateway;
  let http: Awaited<ReturnType<typeof serve>>;
  const servers: StartedSubgraphServer[] = [];

  beforeAll(async () => {
    const defs = [
      { name: 'content', schema: contentSchema() },
      { name: 'admin', schema: adminSchema() },
    ];
    for (const def of defs) servers.push(await startSubgraphServer({ schema: def.schema, createContext, path: '/graphql' }));
    const supergraphSdl = compose(defs.map((d, i) => ({ ...d, url: servers[i]!.url })));
    gateway = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection });
    http = await serve(gateway);
  });

  afterAll(async () => {
    await http?.close();
    await gateway?.dispose();
    for (const s of servers) await s.stop();
  });

  it('plans across subgraph servers, forwarding headers and error extensions', async () => {
    const res = await post(http.url, '{ items { id name owner seenAuthorization } whoami requestId clientAddress }', { authorization: 'Bearer split', 'x-request-id': 'split-1' });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toMatchObject({
      items: [
        { id: '1', owner: 'owner-1', seenAuthorization: 'Bearer split' },
        { id: '2', owner: 'owner-2', seenAuthorization: 'Bearer split' },
      ],
      whoami: 'Bearer split',
      requestId: 'split-1',
      clientAddress: '127.0.0.1',
    });
    const failed = await gateway.execute({ document: '{ fail(code: "GONE") }', headers: new Headers() });
    expect(failed.errors?.[0]).toMatchObject({ message: 'no such thing', extensions: { code: 'GONE', reasonCode: 'notFound', status: 404 } });
    const boom = await post(http.url, '{ boom }');
    expect(boom.body.errors?.[0]).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 } });
    expect(JSON.stringify(boom.body)).not.toMatch(/stack|secret internals/);
  });

  it('relays a subscription from the subgraph over graphql-ws and SSE', async () => {
    const client = wsClient(http.url, 'Bearer good');
    try {
      const events = await collect(client.iterate({ query: 'subscription { ticks(count: 2) { n item { owner seenAuthorization } } }' }));
      expect(events.map((e) => (e.data as { ticks: unknown }).ticks)).toEqual([
        { n: 1, item: { owner: 'owner-2', seenAuthorization: 'Bearer good' } },
        { n: 2, item: { owner: 'owner-1', seenAuthorization: 'Bearer good' } },
      ]);
    } finally {
      await client.dispose();
    }
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer good' },
      body: JSON.stringify({ query: 'subscription { ticks(count: 2) { n } }' }),
    });
    expect((await readSse(response)).map((e) => e.data)).toEqual([{ ticks: { n: 1 } }, { ticks: { n: 2 } }]);
  });

  it('gives a subgraph that never answers up at upstreamTimeout, as unavailable (503)', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket)); // accepts, reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/graphql`;
    const supergraphSdl = supergraphAt(url);
    const stuck = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection, upstreamTimeoutMs: 300 });
    try {
      const started = Date.now();
      const result = await stuck.execute({ document: '{ whoami }', headers: new Headers() });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'unavailable', status: 503 });
      expect(JSON.stringify(result.errors)).not.toMatch(/"request"|"body"/); // the subgraph request stays internal
    } finally {
      await stuck.dispose();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('gives a subgraph named in upstreamTimeoutsMs its own, longer bound', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/graphql`;
    const supergraphSdl = supergraphAt(url);
    const stuck = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection, upstreamTimeoutMs: 300, upstreamTimeoutsMs: { admin: 1_500 } });
    const timed = async (document: string) => {
      const started = Date.now();
      const result = await stuck.execute({ document, headers: new Headers() });
      expect(result.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'unavailable' });
      return Date.now() - started;
    };
    try {
      const [content, admin] = [await timed('{ whoami }'), await timed('{ adminPing }')];
      expect(admin).toBeGreaterThanOrEqual(1_400);
      expect(content).toBeLessThan(admin);
    } finally {
      await stuck.dispose();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('ends a subscription whose subgraph drops the connection with an error, leaving nothing unhandled', async () => {
    const dropping = net.createServer((socket) => setTimeout(() => socket.destroy(), 300));
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(dropping.address() as net.AddressInfo).port}/graphql`;
    const supergraphSdl = supergraphAt(url);
    const flaky = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection });
    const served = await serve(flaky);
    try {
      const response = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer good' },
        body: JSON.stringify({ query: 'subscription { ticks(count: 2) { n } }' }),
      });
      const events = await readSse(response, 5_000);
      expect(events.at(-1)?.errors?.length).toBeGreaterThan(0);
      // a subscriber who leaves while the connection is still pending: nothing unhandled afterwards
      const controller = new AbortController();
      await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer good' },
        body: JSON.stringify({ query: 'subscription { ticks(count: 2) { n } }' }),
        signal: controller.signal,
      }).then((r) => r.body?.getReader().read());
      controller.abort();
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await served.close();
      await flaky.dispose();
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
    }
  });

  it('leaves no timer of upstreamTimeout behind to reject unhandled once a query, a failing query or a subscription is answered', async () => {
    const supergraphSdl = supergraphAt(servers[0]!.url, servers[1]!.url);
    const bounded = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection, upstreamTimeoutMs: 400 });
    const served = await serve(bounded);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      expect((await post(served.url, '{ whoami }', { authorization: 'Bearer good' })).body.errors).toBeUndefined();
      expect((await post(served.url, '{ boom }', { authorization: 'Bearer good' })).body.errors).toBeDefined();
      const client = wsClient(served.url, 'Bearer good');
      try {
        expect(await collect(client.iterate({ query: 'subscription { ticks(count: 2) { n } }' }))).toHaveLength(2);
      } finally {
        await client.dispose();
      }
      const response = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer good' },
        body: JSON.stringify({ query: 'subscription { ticks(count: 2) { n } }' }),
      });
      expect(await readSse(response)).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await served.close();
      await bounded.dispose();
    }
  });

  it('reports an unreachable subgraph as unavailable (503)', async () => {
    const supergraphSdl = supergraphAt('http://127.0.0.1:9/graphql');
    const down = createGateway({ supergraphSdl, graphqlEndpoint: '/graphql', limits, logger, verifyConnection });
    try {
      const result = await down.execute({ document: '{ whoami }', headers: new Headers() });
      expect(result.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'unavailable', status: 503 });
    } finally {
      await down.dispose();
    }
  });
});
