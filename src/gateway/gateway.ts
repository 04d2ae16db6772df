/**
 * The GraphQL gateway (DESIGN §1): Hive Gateway runtime over the composed supergraph, configured
 * through its own options and plugins.
 *
 * - Subgraph calls go through transports: in embedded mode the in-process transport (transport.ts:
 *   graphql-js `execute`/`subscribe` against the subgraph schema, no loopback HTTP); in split mode
 *   Hive's HTTP transport (@graphql-mesh/transport-http) with subscriptions over its WebSocket
 *   transport (@graphql-mesh/transport-ws). Hive's `propagateHeaders` forwards authorization,
 *   x-request-id, x-client-address (and language, user agent) to either; `upstreamTimeout` bounds them.
 * - Request ids: Hive's `requestId` (x-request-id, made sane by the HTTP layer before).
 * - Bounds (limits.ts, useOperationLimits): tokens, depth, aliases, cost by list size.
 * - Custom paths, each a named plugin with an off switch and its gain in docs/benchmarks.md:
 *   useSingleSubgraphShortcut (single-subgraph.ts) and useHttpFastPath (http-fast-path.ts).
 * - graphql-ws is attached on the same path; connection_init {authorization} is checked by
 *   `verifyConnection`; SSE subscriptions need a valid session too; both close when it ends.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  createGatewayRuntime,
  getGraphQLWSOptions,
  Logger as HiveLogger,
  type GatewayPlugin,
  type LogLevel,
} from '@graphql-hive/gateway-runtime';
import httpTransport from '@graphql-mesh/transport-http';
import wsTransport from '@graphql-mesh/transport-ws';
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import { clientAddressHeader } from '../context.js';
import { requestIdPattern } from '../http/middleware/request-id.js';
import { useCompressedGraphiQL } from './graphiql.js';
import { useHttpFastPath, type OperationOutcome, type OperationParams } from './http-fast-path.js';
import { maxOperationBytes, useOperationLimits, type QueryLimits } from './limits.js';
import { asRequestError, subscriptionNeedsSession, useErrorContract, useSaneVariables, useJsonPostsOnly, useWellFormedGetParameters } from './plugins.js';
import { SessionConnections, sessionKeyOf } from './session-connections.js';
import { useSingleSubgraphShortcut } from './single-subgraph.js';
import { SubscriptionLimits, type SubscriptionBounds } from './subscription-limits.js';
import { forwardedHeaders, inProcessKind, inProcessTransport, internalError, type InProcessSubgraph } from './transport.js';
import { attachGraphqlWs, tooManyOperations } from './websockets.js';

export type { InProcessSubgraph } from './transport.js';
export type { QueryLimits } from './limits.js';
export { acceptedCredentials } from './plugins.js';

/** Operations one client's graphql-ws connection may have under way at once (docs/security.md). */
const maxOperationsPerConnection = 100;

export interface GatewayOptions {
  /** the supergraph SDL composed with @apollo/composition */
  supergraphSdl: string;
  /**
   * given → embedded mode: the operations of these subgraphs run in-process (no HTTP); absent → split
   * mode: every subgraph is called at its URL in the supergraph. A subgraph of the supergraph missing
   * from this list is called over HTTP.
   */
  subgraphs?: InProcessSubgraph[];
  /** e.g. '/graphql' or '/base/graphql': the path of the requests given to `handle` and of the WebSocket upgrade */
  graphqlEndpoint: string;
  /** operation bounds: see QueryLimits (depth, aliases, cost; optional listFactor, maxTokens, maxIntrospectionDepth) */
  limits: QueryLimits;
  logger: Logger;
  /**
   * Subscriptions need a session: a graphql-ws connection is refused unless this returns true for the
   * `authorization` value of its connection_init payload; an SSE subscription gets a 401 error unless
   * it returns true for its Authorization header.
   */
  verifyConnection: (authorization: string | undefined) => Promise<boolean>;
  /**
   * Embedded mode: run an operation that one in-process subgraph resolves entirely directly against
   * that subgraph, with a plan cached per document (useSingleSubgraphShortcut). Default true.
   */
  singleSubgraphShortcut?: boolean;
  /** plain JSON POSTs skip the runtime's HTTP adapter (see http-fast-path.ts). Default true. */
  httpFastPath?: boolean;
  /** a subgraph call over HTTP that has not answered after this long fails as unavailable (default 30 s) */
  upstreamTimeoutMs?: number;
  /** subgraphs whose calls may take longer by design, by name (health: the synchronous deep check) */
  upstreamTimeoutsMs?: Readonly<Partial<Record<string, number>>>;
  /** origins (scheme://host[:port]) allowed cross-origin access; none by default (no CORS headers at all) */
  corsOrigins?: readonly string[];
  /** answer introspection queries (default true) */
  introspection?: boolean;
  /** further Hive plugins (e.g. telemetry); they see every subgraph call unless the single-subgraph shortcut takes it */
  plugins?: GatewayPlugin[];
  /** how often the session of each open subscription connection is verified again (default 30 s) */
  reverifySessionsMs?: number;
  /**
   * what one session and one client address may hold open (unbounded when absent, beyond the 100
   * operations of one socket): a socket beyond is closed with 4429, an operation beyond is a 429
   */
  subscriptionBounds?: Partial<SubscriptionBounds>;
}

export interface Gateway {
  /**
   * Node handler for HTTP requests to graphqlEndpoint (POST, GET, SSE subscriptions, GraphiQL for
   * browsers): call it from a Koa route with ctx.respond = false and no body parser before it. `req.url`
   * must be the endpoint path (plus a query string for GETs). Sets x-client-address from the socket.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** in-process execution for the REST compatibility layer: same plugins, limits and header forwarding; parsed and validated documents are cached */
  execute(args: { document: string; variables?: Record<string, unknown>; headers: Headers }): Promise<ExecutionResult>;
  /** attaches graphql-ws to the server on graphqlEndpoint (connection_init payload {authorization: "Bearer <id>"} becomes the subgraphs' authorization header) */
  attachWebSockets(server: Server): void;
  /** closes the subscription connections (graphql-ws, SSE) of the session with this token hash */
  endSession(tokenHash: string): void;
  /** resolves once the supergraph is loaded (optional: the first request waits for it anyway) */
  ready(): Promise<void>;
  dispose(): Promise<void>;
}

/** pino's levels as the Hive logger's (false: silent). */
const hiveLevels: Record<string, LogLevel | false> = { trace: 'trace', debug: 'debug', info: 'info', warn: 'warn', error: 'error', fatal: 'error', silent: false };

/** pino → the Hive logger the gateway runtime expects. */
function hiveLogger(logger: Logger): HiveLogger {
  return new HiveLogger({
    level: () => hiveLevels[logger.level] ?? 'info',
    writers: [
      {
        write(level, attrs, msg) {
          logger[level]({ ...attrs }, msg ?? undefined);
        },
      },
    ],
  });
}

function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!params) return undefined;
  const value = params['authorization'] ?? params['Authorization'];
  return typeof value === 'string' ? value : undefined;
}

/** a client's x-request-id is kept when it is sane (the rule of src/http/middleware/request-id.ts), else replaced */
function saneRequestId(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && requestIdPattern.test(value) ? value : undefined;
}

/** The headers of a Node request as a WHATWG Headers init (repeated headers joined, as fetch does). */
function nodeHeaders(req: IncomingMessage): [string, string][] {
  const entries: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) entries.push([name, Array.isArray(value) ? value.join(', ') : value]);
  }
  return entries;
}


export function createGateway(options: GatewayOptions): Gateway {
  const { graphqlEndpoint, limits, verifyConnection } = options;
  const log = options.logger.child({ module: 'gateway' });
  const hiveLog = hiveLogger(log);
  const inProcess = new Map((options.subgraphs ?? []).map((s) => [s.name.toLowerCase(), s]));
  const sessionConnections = new SessionConnections(verifyConnection, options.reverifySessionsMs ?? 30_000);
  const subscriptionLimits = new SubscriptionLimits(options.subscriptionBounds ?? {});
  /** the operations check of each accepted graphql-ws socket, by its graphql-ws context */
  const socketOperationChecks = new WeakMap<object, () => string | undefined>();

  /** SSE (and any non-WebSocket) subscriptions need a valid session; graphql-ws checks it at connection_init */
  const subscriptionAuthPlugin: GatewayPlugin = {
    onSubscribe({ context, setResultAndStopExecution }) {
      if (context.connectionParams) return undefined;
      return verifyConnection(context.headers['authorization']).then(
        (ok) => {
          if (!ok) setResultAndStopExecution(subscriptionNeedsSession());
        },
        (error: unknown) => {
          log.error({ err: error }, 'verifyConnection failed');
          setResultAndStopExecution(subscriptionNeedsSession());
        },
      );
    },
  };

  const runtime = createGatewayRuntime({
    supergraph: options.supergraphSdl,
    transports: { http: httpTransport, ws: wsTransport, [inProcessKind]: inProcessTransport(inProcess, log) },
    transportEntries: {
      // split mode: subscriptions over graphql-ws at the subgraph's URL, one connection per session
      '*.http': { options: { subscriptions: { kind: 'ws', options: { connectionParams: { authorization: '{context.headers.authorization}' } } } } },
      ...Object.fromEntries([...inProcess.keys()].map((name) => [name, { kind: inProcessKind }])),
    },
    propagateHeaders: { fromClientToSubgraphs: ({ request }) => forwardedHeaders(request.headers) },
    // subgraphs over HTTP only: an in-process call has no upstream to give up on. Not subscriptions: they
    // live as long as their client wants, and Hive's bound, given the stream its executor returns at once,
    // left its timer to reject a promise nobody awaited when it ran out (an unhandled rejection ends a process)
    upstreamTimeout: ({ subgraphName, executionRequest }) =>
      (subgraphName && inProcess.has(subgraphName.toLowerCase())) || executionRequest?.operationType === 'subscription'
        ? undefined
        : (options.upstreamTimeoutsMs?.[subgraphName?.toLowerCase() ?? ''] ?? options.upstreamTimeoutMs ?? 30_000),
    graphqlEndpoint,
    logging: hiveLog,
    landingPage: false,
    // served by useCompressedGraphiQL (yoga's would send the 9 MB page uncompressed every time)
    graphiql: false,
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (!origin || !options.corsOrigins?.includes(origin)) return false;
      return {
        origin: [origin],
        credentials: false,
        methods: ['GET', 'POST'],
        allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id'],
        exposedHeaders: ['x-request-id'],
        maxAge: 600,
      };
    },
    ...(options.introspection === false ? { disableIntrospection: {} } : {}),
    plugins: () => [
      useCompressedGraphiQL({ endpoint: graphqlEndpoint, title: 'Content Repository — GraphiQL' }),
      useJsonPostsOnly,
      useWellFormedGetParameters,
      useErrorContract(),
      useSaneVariables,
      useOperationLimits(limits),
      subscriptionAuthPlugin,
      ...(options.plugins ?? []),
      ...(inProcess.size > 0 && options.singleSubgraphShortcut !== false
        ? [useSingleSubgraphShortcut({ supergraphSdl: options.supergraphSdl, subgraphs: [...inProcess.values()], logger: log })]
        : []),
    ],
  });

  let ready: Promise<void> | undefined;
  const ensureReady = () =>
    (ready ??= Promise.resolve(runtime.getSchema()).then(
      () => undefined,
      (error: unknown) => {
        ready = undefined;
        throw error;
      },
    ));

  const detachers: (() => Promise<void>)[] = [];

  const unexpected = (error: unknown) => log.error({ err: error }, 'unexpected error while serving a GraphQL request');
  const requestError = (message: string): OperationOutcome => ({
    result: { errors: [new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', reasonCode: 'illegalArguments', status: 400 } })] },
    requestError: true,
  });

  /**
   * One query or mutation through the runtime's envelop pipeline without its HTTP layer: the same
   * plugins (limits, masking, subgraph hooks), parse and validation caches, planning and transports
   * as an HTTP request. Used by execute() and by the HTTP fast path. `request` stands for the
   * client's request (Hive's propagateHeaders reads the headers to forward from it).
   */
  async function runOperation(request: Request, params: OperationParams, serverContext: { req?: IncomingMessage; res?: ServerResponse }): Promise<OperationOutcome> {
    await ensureReady();
    const headers = Object.fromEntries(request.headers);
    const enveloped = runtime.getEnveloped({ ...serverContext, request, log: hiveLog, headers, params });
    let document: DocumentNode;
    try {
      document = enveloped.parse(params.query);
    } catch (error) {
      // a syntax error, or one of yoga's checks after parsing (no operation to pick): thrown past the error contract's hooks
      return { result: { errors: [asRequestError(error instanceof GraphQLError ? error : new GraphQLError((error as Error).message))] }, requestError: true };
    }
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return { result: { errors }, requestError: true };
    const operation = getOperationAST(document, params.operationName);
    if (!operation) {
      return requestError(params.operationName ? `Unknown operation named "${params.operationName}".` : 'Must provide an operation name when the document holds several operations.');
    }
    if (operation.operation === 'subscription') {
      return requestError('Subscriptions are served over graphql-ws or SSE (Accept: text/event-stream).');
    }
    const contextValue = await enveloped.contextFactory();
    const result: ExecutionResult | AsyncIterable<ExecutionResult> = await enveloped.execute({
      schema: enveloped.schema,
      document,
      variableValues: params.variables,
      operationName: params.operationName,
      contextValue,
    });
    if (Symbol.asyncIterator in result) return requestError('Incremental delivery (@defer/@stream) is not supported.');
    return { result, requestError: result.data === undefined };
  }

  const requestUrl = `http://gateway${graphqlEndpoint}`;
  /** the client request as a WHATWG Request (headers only: the body was read already) */
  const requestOf = (headers: HeadersInit) => new Request(requestUrl, { method: 'POST', headers });

  const fastPath =
    options.httpFastPath === false
      ? undefined
      : useHttpFastPath({
          graphqlEndpoint,
          maxBodyBytes: maxOperationBytes,
          onUnexpected: unexpected,
          run: (req, res, params) => runOperation(requestOf(nodeHeaders(req)), params, { req, res }),
        });

  return {
    async handle(req, res) {
      // the address subgraphs rate-limit on comes from the socket, never from the client
      const address = req.socket.remoteAddress ?? 'unknown';
      req.headers[clientAddressHeader] = address;
      const id = saneRequestId(req.headers['x-request-id']) ?? randomUUID();
      req.headers['x-request-id'] = id;
      if (req.headers.accept?.includes('text/event-stream')) {
        const stream = subscriptionLimits.openStream(sessionKeyOf(req.headers.authorization), address);
        if ('refused' in stream) {
          res.writeHead(429, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ errors: [tooManyOperations(stream.refused)] }));
          return;
        }
        const untrack = sessionConnections.track(req.headers.authorization, () => res.destroy());
        res.once('close', () => {
          untrack();
          stream.release();
        });
      }
      if (await fastPath?.(req, res, id)) return;
      await runtime.requestListener(req, res);
    },

    async execute({ document, variables, headers }) {
      const request = requestOf(headers);
      request.headers.set('x-request-id', saneRequestId(headers.get('x-request-id') ?? undefined) ?? randomUUID());
      try {
        return (await runOperation(request, { query: document, variables }, {})).result;
      } catch (error) {
        unexpected(error);
        return { errors: [internalError()] };
      }
    },

    attachWebSockets(server) {
      const graphqlWs = getGraphQLWSOptions<Record<string, unknown>, { request: IncomingMessage }>(runtime, (ctx) => {
        const upgrade = ctx.extra.request;
        const headers: Record<string, string> = {
          'x-request-id': randomUUID(),
          [clientAddressHeader]: upgrade.socket.remoteAddress ?? 'unknown',
        };
        for (const name of ['user-agent', 'accept-language'] as const) {
          const value = upgrade.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        const authorization = authorizationOf(ctx.connectionParams);
        if (authorization) headers['authorization'] = authorization;
        // connectionParams are merged into the headers by the runtime: keep only the session
        return { req: upgrade, request: requestOf(headers), headers, connectionParams: authorization ? { authorization } : {} };
      });
      detachers.push(
        attachGraphqlWs(server, graphqlEndpoint, {
          ...graphqlWs,
          onSubscribe: (ctx, id, payload) => {
            // graphql-ws has entered this one among the socket's operations already
            const refused = socketOperationChecks.get(ctx)?.();
            return refused ? [tooManyOperations(refused)] : graphqlWs.onSubscribe?.(ctx, id, payload);
          },
          onConnect: async (ctx) => {
            const authorization = authorizationOf(ctx.connectionParams);
            try {
              if (!(await verifyConnection(authorization))) return false;
            } catch (error) {
              log.error({ err: error }, 'verifyConnection failed');
              return false;
            }
            const socket = ctx.extra.socket;
            const admission = subscriptionLimits.openSocket(sessionKeyOf(authorization), ctx.extra.request.socket.remoteAddress ?? 'unknown', () => Object.keys(ctx.subscriptions).length);
            if ('refused' in admission) {
              // graphql-ws would close with 4403 Forbidden: the client learns why, and that retrying now is no use
              socket.close(4429, admission.refused);
              return false;
            }
            socketOperationChecks.set(ctx, admission.operationRefused);
            const untrack = sessionConnections.track(authorization, () => socket.close(4401, 'Session ended'));
            socket.once('close', () => {
              untrack();
              admission.release();
            });
            return true;
          },
        }, maxOperationsPerConnection),
      );
    },

    endSession: (tokenHash) => sessionConnections.end(tokenHash),

    ready: ensureReady,

    async dispose() {
      sessionConnections.dispose();
      for (const detach of detachers.splice(0)) await detach();
      await runtime.dispose();
    },
  };
}
