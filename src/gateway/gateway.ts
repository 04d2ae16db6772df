/**
 * The GraphQL gateway (DESIGN §1): Hive Gateway runtime over the composed supergraph.
 *
 * - Subgraph calls go through a custom `http` transport (transport.ts): subgraphs given in-process
 *   (embedded mode) execute with graphql-js `execute`/`subscribe` against their schema and their own
 *   `createContext(headers)` — no loopback HTTP; the others (split mode) are POSTed to their URL, with
 *   subscriptions over graphql-ws. Both forward authorization, x-request-id, x-client-address.
 * - Operations one in-process subgraph resolves alone skip delegation (single-subgraph.ts: a plan
 *   cached per parsed document); the rest are planned by the runtime.
 * - HTTP: plain JSON POSTs from non-browser clients take a fast path (http-fast-path.ts) through the
 *   same envelop pipeline; GET, SSE, GraphiQL (offline, inlined assets) and CORS requests go to the
 *   runtime. graphql-ws is attached on the same path; connection_init {authorization} is checked by
 *   `verifyConnection` and becomes the subgraphs' authorization header.
 * - Bounds (limits.ts): depth, aliases and cost as a validation rule, tokens in the parser.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  createGatewayRuntime,
  getGraphQLWSOptions,
  Logger as HiveLogger,
  type GatewayConfigSupergraph,
  type GatewayPlugin,
  type LogLevel,
} from '@graphql-hive/gateway-runtime';
import type { DocumentNode, ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import { getOperationAST, getVariableValues, GraphQLError } from 'graphql';
import { fastPathMediaType, serveFastPath, type OperationOutcome, type OperationParams } from './http-fast-path.js';
import { SingleSubgraphPlanner } from './single-subgraph.js';
import { attachGraphqlWs } from './websockets.js';
import { boundedParse, createCostCheck, createLimitsRule, type QueryLimits } from './limits.js';
import { useCompressedGraphiQL } from './graphiql.js';
import { SessionConnections } from './session-connections.js';
import { clientAddressHeader } from '../context.js';
import { requestIdPattern } from '../http/middleware/request-id.js';
import {
  httpExecutor,
  internalError,
  inProcessExecutor,
  requestIds,
  type InProcessSubgraph,
  type SubgraphExecutor,
} from './transport.js';

export type { InProcessSubgraph } from './transport.js';
export type { QueryLimits } from './limits.js';

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
   * that subgraph, with a plan cached per document (see single-subgraph.ts). Default true.
   */
  singleSubgraphShortcut?: boolean;
  /** origins (scheme://host[:port]) allowed cross-origin access; none by default (no CORS headers at all) */
  corsOrigins?: readonly string[];
  /** answer introspection queries (default true) */
  introspection?: boolean;
  /** how often the session of each open subscription connection is verified again (default 30 s) */
  reverifySessionsMs?: number;
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

/** pino → the Hive logger the gateway runtime expects. */
function hiveLogger(logger: Logger): HiveLogger {
  const level = (): LogLevel | false => {
    const current = logger.level;
    if (current === 'silent') return false;
    if (current === 'fatal') return 'error';
    return current as LogLevel;
  };
  return new HiveLogger({
    level,
    writers: [
      {
        write(lvl, attrs, msg) {
          const log = logger[lvl].bind(logger) as (obj: object, msg?: string) => void;
          log((attrs ?? {}) as object, msg ?? undefined);
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

/** largest GraphQL request body the fast path reads (the runtime's own limit applies to the other requests) */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** What /graphql accepts as a session, told with every 401 it answers. */
export const acceptedCredentials =
  'send the session id as the header "Authorization: Bearer <session id>" (over graphql-ws: the connection_init payload {"authorization": "Bearer <session id>"})';

const notAuthenticated = (): ExecutionResult => ({
  errors: [
    new GraphQLError(`A subscription needs a valid session: ${acceptedCredentials}.`, {
      extensions: { code: 'UNAUTHENTICATED', reasonCode: 'notAuthenticated', status: 401, http: { status: 401 } },
    }),
  ],
});

/** Content types a browser may POST cross-site without a preflight: never a GraphQL request here (CSRF). */
const simpleRequestTypes = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * Refuses POSTs a browser sends cross-site without a CORS preflight (form-encoded, multipart,
 * text/plain): with them a page elsewhere could run mutations. The same test as yoga's CSRF
 * prevention plugin, for POSTs only: GET cannot run mutations, and GET queries stay open to clients
 * that cannot set headers (yoga's plugin would require a custom header on every GET).
 */
const useJsonPostsOnly: GatewayPlugin = {
  onRequestParse({ request }) {
    if (request.method !== 'POST') return;
    const type = request.headers.get('content-type')?.toLowerCase() ?? '';
    if (type === '' || simpleRequestTypes.some((simple) => type.startsWith(simple))) {
      throw new GraphQLError('POST a GraphQL request as application/json.', {
        extensions: { code: 'UNSUPPORTED_MEDIA_TYPE', reasonCode: 'unsupportedMediaType', status: 415, http: { status: 415 } },
      });
    }
  },
};

/** HTTP clients without a session learn what /graphql accepts: a longer message, and `WWW-Authenticate: Bearer`. */
const useAuthenticationHint: GatewayPlugin = {
  onExecutionResult({ result, setResult, context }) {
    if (!result || !('request' in context) || Symbol.asyncIterator in result || !result.errors?.some((e) => e.extensions?.['reasonCode'] === 'notAuthenticated')) return;
    setResult({
      ...result,
      errors: result.errors.map((error) =>
        error.extensions?.['reasonCode'] === 'notAuthenticated' && !error.message.includes('connection_init')
          ? new GraphQLError(`${error.message} (/graphql: ${acceptedCredentials})`, { path: error.path, extensions: error.extensions })
          : error,
      ),
    });
  },
  onResponse({ response }) {
    if (response.status === 401) response.headers.set('www-authenticate', 'Bearer');
  },
};

export function createGateway(options: GatewayOptions): Gateway {
  const { graphqlEndpoint, limits, verifyConnection } = options;
  const log = options.logger.child({ module: 'gateway' });
  const hiveLog = hiveLogger(log);
  const inProcess = new Map((options.subgraphs ?? []).map((s) => [s.name.toLowerCase(), s]));
  // one executor per in-process subgraph, for the planner's delegation and the shortcut alike
  const inProcessExecutors = new Map([...inProcess].map(([name, s]) => [name, inProcessExecutor(s, log)]));

  const transports = {
    http: {
      getSubgraphExecutor({ subgraphName, transportEntry, fetch }: { subgraphName: string; transportEntry: { location?: string }; fetch?: unknown }): SubgraphExecutor {
        const local = inProcessExecutors.get(subgraphName.toLowerCase());
        if (local) return local;
        if (!transportEntry.location) throw new Error(`subgraph ${subgraphName} has no URL in the supergraph`);
        if (options.subgraphs) log.warn({ subgraph: subgraphName, url: transportEntry.location }, 'subgraph not given in-process: calling it over HTTP');
        return httpExecutor(subgraphName, transportEntry.location, fetch as never);
      },
    },
  } as unknown as GatewayConfigSupergraph['transports'];

  const planner =
    inProcess.size > 0 && options.singleSubgraphShortcut !== false
      ? new SingleSubgraphPlanner(options.supergraphSdl, new Map([...inProcess].map(([name, s]) => [name, s.schema])))
      : undefined;
  const sessionConnections = new SessionConnections(verifyConnection, options.reverifySessionsMs ?? 30_000);

  /** single-subgraph operations skip delegation (the answers are the ones the planner would produce) */
  const shortcutPlugin: GatewayPlugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const target = planner?.plan(args.document, args.operationName);
      if (!target) return;
      const executor = inProcessExecutors.get(target)!;
      const variableDefinitions = getOperationAST(args.document, args.operationName)?.variableDefinitions ?? [];
      setExecuteFn(async (execArgs) => {
        // variables the supergraph rejects: the planner's path reports them exactly as for any operation
        if (getVariableValues(execArgs.schema, variableDefinitions, execArgs.variableValues ?? {}).errors) return executeFn(execArgs);
        const result = (await executor({
          document: execArgs.document,
          variables: execArgs.variableValues ?? undefined,
          operationName: execArgs.operationName ?? undefined,
          context: execArgs.contextValue as never,
        })) as ExecutionResult;
        // as the runtime's subgraph error handling does for planned operations
        for (const error of result.errors ?? []) {
          const extensions = error.extensions as Record<string, unknown>;
          extensions['code'] ??= 'DOWNSTREAM_SERVICE_ERROR';
          extensions['serviceName'] ??= target;
        }
        return result;
      });
    },
  };

  const limitsRule = createLimitsRule(limits);
  const costCheck = createCostCheck(limits);
  const parseFn = boundedParse(limits.maxTokens ?? 10_000);

  /** x-request-id: the client's, or a fresh one; echoed in the response and forwarded to subgraphs */
  const requestIdPlugin: GatewayPlugin = {
    onRequest({ request }) {
      requestIds.set(request, saneRequestId(request.headers.get('x-request-id') ?? undefined) ?? randomUUID());
    },
    onResponse({ request, response }) {
      const id = requestIds.get(request);
      if (id) response.headers.set('x-request-id', id);
    },
  };

  const limitsPlugin: GatewayPlugin = {
    onParse({ setParseFn }) {
      setParseFn(parseFn);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(limitsRule);
    },
    // the cost needs the variables (list sizes, @skip/@include): checked before execution, a 400
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const error = operation && costCheck(args.schema, args.document, operation, args.variableValues ?? {});
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const error = operation && costCheck(args.schema, args.document, operation, args.variableValues ?? {});
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };

  /** SSE (and any non-WebSocket) subscriptions need a valid session; graphql-ws checks it at connection_init */
  const subscriptionAuthPlugin: GatewayPlugin = {
    onSubscribe({ context, setResultAndStopExecution }) {
      const ctx = context as { connectionParams?: unknown; headers?: Record<string, string | undefined> };
      if (ctx.connectionParams) return undefined;
      return verifyConnection(ctx.headers?.['authorization']).then(
        (ok) => {
          if (!ok) setResultAndStopExecution(notAuthenticated() as never);
        },
        (error: unknown) => {
          log.error({ err: error }, 'verifyConnection failed');
          setResultAndStopExecution(notAuthenticated() as never);
        },
      );
    },
  };

  const runtime = createGatewayRuntime({
    supergraph: options.supergraphSdl,
    transports,
    graphqlEndpoint,
    logging: hiveLog,
    landingPage: false,
    // served by useCompressedGraphiQL (yoga's would send the 9 MB page uncompressed every time)
    graphiql: false,
    requestId: false,
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
      useAuthenticationHint,
      requestIdPlugin,
      limitsPlugin,
      subscriptionAuthPlugin,
      shortcutPlugin,
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
  const requestError = (message: string): OperationOutcome => ({ result: { errors: [new GraphQLError(message)] }, requestError: true });

  /**
   * One query or mutation through the runtime's envelop pipeline without its HTTP layer: the same
   * plugins (limits, masking, subgraph hooks), parse and validation caches, planning and transports
   * as an HTTP request. Used by execute() and by the HTTP fast path.
   */
  async function runOperation(headers: Record<string, string | string[] | undefined>, params: OperationParams, serverContext: object): Promise<OperationOutcome> {
    await ensureReady();
    const enveloped = runtime.getEnveloped({ ...serverContext, log: hiveLog, headers, params } as never);
    let document: DocumentNode;
    try {
      document = enveloped.parse(params.query);
    } catch (error) {
      return { result: { errors: [error instanceof GraphQLError ? error : new GraphQLError((error as Error).message)] }, requestError: true };
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
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      variableValues: params.variables,
      operationName: params.operationName,
      contextValue,
    })) as ExecutionResult | AsyncIterable<ExecutionResult>;
    if (Symbol.asyncIterator in result) return requestError('Incremental delivery (@defer/@stream) is not supported.');
    return { result, requestError: result.data === undefined };
  }

  const fastPath = {
    maxBodyBytes: MAX_BODY_BYTES,
    onUnexpected: unexpected,
    run: (req: IncomingMessage, res: ServerResponse, params: OperationParams) => runOperation(req.headers, params, { req, res }),
  };

  return {
    async handle(req, res) {
      // the address subgraphs rate-limit on comes from the socket, never from the client
      req.headers[clientAddressHeader] = req.socket.remoteAddress ?? 'unknown';
      const id = saneRequestId(req.headers['x-request-id']) ?? randomUUID();
      req.headers['x-request-id'] = id;
      if (req.headers.accept?.includes('text/event-stream')) {
        const untrack = sessionConnections.track(req.headers.authorization, () => res.destroy());
        res.once('close', untrack);
      }
      const mediaType = fastPathMediaType(req, graphqlEndpoint);
      if (mediaType) {
        await serveFastPath(req, res, mediaType, id, fastPath);
        return;
      }
      await runtime.requestListener(req, res);
    },

    async execute({ document, variables, headers }) {
      const record: Record<string, string> = {};
      headers.forEach((value, name) => {
        record[name] = value;
      });
      record['x-request-id'] = saneRequestId(record['x-request-id']) ?? randomUUID();
      try {
        return (await runOperation(record, { query: document, variables }, {})).result;
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
        return { req: upgrade, headers, connectionParams: authorization ? { authorization } : {} };
      });
      detachers.push(
        attachGraphqlWs(server, graphqlEndpoint, {
          ...graphqlWs,
          onConnect: async (ctx) => {
            const authorization = authorizationOf(ctx.connectionParams);
            try {
              if (!(await verifyConnection(authorization))) return false;
            } catch (error) {
              log.error({ err: error }, 'verifyConnection failed');
              return false;
            }
            const socket = ctx.extra.socket;
            const untrack = sessionConnections.track(authorization, () => socket.close(4401, 'Session ended'));
            socket.once('close', untrack);
            return true;
          },
        }),
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
