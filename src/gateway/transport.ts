import { randomUUID } from 'node:crypto';
import type { DocumentNode, ExecutionResult, GraphQLSchema, OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { execute, GraphQLError, print, subscribe } from 'graphql';

/** Headers a subgraph receives from the gateway (whatever the client sent besides is dropped). */
const FORWARDED_HEADERS = ['authorization', 'x-request-id', 'x-client-address', 'accept-language', 'user-agent'] as const;

export interface InProcessSubgraph {
  name: string;
  schema: GraphQLSchema;
  /** builds the subgraph resolvers' context from the incoming request headers (authorization: Bearer <session>, x-request-id) */
  createContext: (headers: Headers) => Promise<object> | object;
}

/** What the gateway runtime hands an executor (the subset of @graphql-tools/utils ExecutionRequest used here). */
interface SubgraphRequest {
  document: DocumentNode;
  variables?: Record<string, unknown>;
  operationName?: string;
  operationType?: OperationTypeNode;
  rootValue?: unknown;
  context?: GatewayRequestContext;
  info?: unknown;
  signal?: AbortSignal;
}

/** The parts of the gateway (yoga) context the transports read. */
interface GatewayRequestContext {
  headers?: Record<string, string | undefined>;
  request?: Request;
  [key: string]: unknown;
}

type SubgraphResult = ExecutionResult | AsyncIterable<ExecutionResult>;
export type SubgraphExecutor = (request: SubgraphRequest) => Promise<SubgraphResult>;

/** Request ids assigned to HTTP requests that came without `x-request-id` (filled by the gateway's request-id plugin). */
export const requestIds = new WeakMap<object, string>();

/** The headers forwarded to a subgraph for one gateway operation. */
function forwardedHeaders(context: GatewayRequestContext | undefined): Headers {
  const headers = new Headers();
  const source = context?.headers;
  if (source) {
    for (const name of FORWARDED_HEADERS) {
      const value = source[name];
      if (typeof value === 'string' && value !== '') headers.set(name, value);
    }
  }
  if (!headers.has('x-request-id')) {
    const id = (context?.request && requestIds.get(context.request)) || randomUUID();
    headers.set('x-request-id', id);
  }
  return headers;
}

/**
 * One subgraph context per (gateway operation, subgraph): a gateway operation that calls the same
 * subgraph several times (root fields, then `_entities`) shares one resolver context (one session
 * lookup, one unit of work), like one request would on a monolith.
 */
const contexts = new WeakMap<object, Map<string, Promise<object>>>();

function subgraphContext(subgraph: InProcessSubgraph, gatewayContext: GatewayRequestContext | undefined): Promise<object> {
  if (!gatewayContext) return Promise.resolve(subgraph.createContext(forwardedHeaders(undefined)));
  let perSubgraph = contexts.get(gatewayContext);
  if (!perSubgraph) {
    perSubgraph = new Map();
    contexts.set(gatewayContext, perSubgraph);
  }
  let context = perSubgraph.get(subgraph.name);
  if (!context) {
    context = Promise.resolve(subgraph.createContext(forwardedHeaders(gatewayContext)));
    perSubgraph.set(subgraph.name, context);
  }
  return context;
}

/** What a client sees of an error that is not a GraphQLError (a bug, a driver error …): never its message or stack. */
export function internalError(path?: readonly (string | number)[]): GraphQLError {
  return new GraphQLError('Unexpected error.', { path, extensions: { code: 'INTERNAL_SERVER_ERROR', reasonCode: 'internal', status: 500 } });
}

interface ErrorLogger {
  error(obj: object, msg?: string): void;
}

/**
 * The errors of an in-process result as the gateway would get them over the wire: message, path and
 * extensions (`code`, `reasonCode`, `status` … intact) of errors the resolvers threw as GraphQLErrors;
 * anything else becomes an opaque INTERNAL_SERVER_ERROR and is logged with its stack.
 */
function wireErrors(result: ExecutionResult, subgraph: string, logger: ErrorLogger | undefined): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const original = error.originalError;
    if (original && !(original instanceof GraphQLError)) {
      logger?.error({ err: original, subgraph, path: error.path }, 'unexpected error in a subgraph resolver');
      return internalError(error.path);
    }
    return new GraphQLError(error.message, { path: error.path, extensions: error.extensions });
  });
  return { ...result, errors };
}

function mapAsyncIterable<T, U>(iterable: AsyncIterable<T>, map: (value: T) => U): AsyncIterable<U> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = iterable[Symbol.asyncIterator]();
      return {
        async next() {
          const step = await iterator.next();
          return step.done ? { done: true, value: undefined } : { done: false, value: map(step.value) };
        },
        async return() {
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * Executes the gateway's subgraph operations in-process against the subgraph schema: graphql-js
 * `execute` / `subscribe` with the subgraph's own context, no HTTP and no serialization. The
 * operations come from the gateway's query planner, which only emits valid operations, so they
 * are not validated again.
 */
export function inProcessExecutor(subgraph: InProcessSubgraph, logger?: ErrorLogger): SubgraphExecutor {
  const normalize = (result: ExecutionResult) => wireErrors(result, subgraph.name, logger);
  return async (request) => {
    let contextValue: object;
    try {
      contextValue = await subgraphContext(subgraph, request.context);
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [new GraphQLError(error.message, { extensions: error.extensions })] };
      logger?.error({ err: error, subgraph: subgraph.name }, 'creating the subgraph context failed');
      return { errors: [internalError()] };
    }
    const args = {
      schema: subgraph.schema,
      document: request.document,
      variableValues: request.variables,
      operationName: request.operationName,
      rootValue: request.rootValue,
      contextValue,
    };
    if (request.operationType === 'subscription') {
      const result = await subscribe(args);
      return Symbol.asyncIterator in result ? mapAsyncIterable(result, normalize) : normalize(result);
    }
    return normalize(await execute(args));
  };
}

type FetchFn = (url: string, init: RequestInit, context?: unknown, info?: unknown) => Promise<Response>;

/** The error every operation of a subgraph that cannot be reached gets (HTTP 503 on the REST layer). */
function unavailable(subgraphName: string, detail: string): ExecutionResult {
  return {
    errors: [
      new GraphQLError(`The ${subgraphName} service is unavailable.`, {
        extensions: { code: 'SERVICE_UNAVAILABLE', reasonCode: 'unavailable', status: 503, serviceName: subgraphName, detail },
      }),
    ],
  };
}

/**
 * Split mode: queries and mutations are POSTed to the subgraph URL, subscriptions go over graphql-ws
 * to the same URL (the subgraph server of subgraph-server.ts serves both). The authorization and
 * request-id headers of the client operation are forwarded (over graphql-ws: in the connection_init
 * payload, one connection per subscription because each may carry another session).
 */
export function httpExecutor(
  subgraphName: string,
  url: string,
  fetchFn: FetchFn = (u, init) => fetch(u, init),
  /** a subgraph that accepts the request but never answers is given up after this long */
  timeoutMs = 30_000,
): SubgraphExecutor {
  const wsUrl = url.replace(/^http/, 'ws');
  return async (request) => {
    const headers = forwardedHeaders(request.context);
    const payload = { query: print(request.document), variables: request.variables, operationName: request.operationName };
    if (request.operationType === 'subscription') {
      return subscribeOverWebSocket(subgraphName, wsUrl, headers, payload);
    }
    const body = JSON.stringify(payload);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/graphql-response+json, application/json');
    let response: Response;
    try {
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
      response = await fetchFn(url, { method: 'POST', headers, body, signal }, request.context, request.info);
    } catch (error) {
      return unavailable(subgraphName, (error as Error).message);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return unavailable(subgraphName, (error as Error).message);
    }
    try {
      const result = JSON.parse(text) as ExecutionResult;
      if (result && (result.data !== undefined || result.errors)) return result;
    } catch {
      // fall through
    }
    if (response.status >= 500) return unavailable(subgraphName, `HTTP ${response.status}`);
    return { errors: [new GraphQLError(`Unexpected response from the ${subgraphName} service (HTTP ${response.status}).`, { extensions: { code: 'INTERNAL_SERVER_ERROR', reasonCode: 'internal', status: 500 } })] };
  };
}

function subscribeOverWebSocket(
  subgraphName: string,
  url: string,
  headers: Headers,
  payload: { query: string; variables?: Record<string, unknown>; operationName?: string },
): AsyncIterable<ExecutionResult> {
  const connectionParams: Record<string, string> = {};
  for (const [name, value] of headers) connectionParams[name] = value;
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: true,
    retryAttempts: 0,
    // a subgraph that accepts the socket but never acknowledges must not hold the subscriber forever
    connectionAckWaitTimeout: 10_000,
    connectionParams,
  });
  const iterator = client.iterate(payload);
  let finished = false;
  const close = () => {
    finished = true;
    // dispose waits for a pending connection, which may then fail: nobody awaits that (and Node exits
    // on an unhandled rejection)
    Promise.resolve(client.dispose()).catch(() => undefined);
  };
  return {
    [Symbol.asyncIterator]() {
      return {
        async next() {
          if (finished) return { done: true, value: undefined };
          try {
            const step = await iterator.next();
            if (step.done) close();
            return step as IteratorResult<ExecutionResult>;
          } catch (error) {
            close();
            const reason = error instanceof Error ? error.message : (error as { reason?: string })?.reason ?? String(error);
            if (Array.isArray(error)) {
              // graphql-ws rejects with the subgraph's GraphQL errors of an `error` message
              return { done: false, value: { errors: error as GraphQLError[] } };
            }
            return { done: false, value: unavailable(subgraphName, reason) };
          }
        },
        async return() {
          await iterator.return?.();
          close();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
