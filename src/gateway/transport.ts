import type { Transport } from '@graphql-mesh/transport-common';
import type { ExecutionRequest, ExecutionResult as SubgraphResult } from '@graphql-tools/utils';
import { GraphQLError, subscribe, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { CompiledExecution } from './compiled-execution.js';

export interface InProcessSubgraph {
  name: string;
  schema: GraphQLSchema;
  /** builds the subgraph resolvers' context from the incoming request headers (authorization: Bearer <session>, x-request-id) */
  createContext: (headers: Headers) => Promise<object> | object;
}

/** Headers a subgraph receives from the gateway (whatever the client sent besides is dropped): Hive's `propagateHeaders`. */
const forwardedHeaderNames = ['authorization', 'x-request-id', 'x-client-address', 'accept-language', 'user-agent'] as const;

export function forwardedHeaders(headers: Headers): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name of forwardedHeaderNames) {
    const value = headers.get(name);
    if (value) forwarded[name] = value;
  }
  return forwarded;
}

/** The transport kind of in-process subgraphs (`transportEntries: { <name>: { kind } }`). */
export const inProcessKind = 'inprocess';

/** What a client sees of an error that is not a GraphQLError (a bug, a driver error …): never its message or stack. */
export function internalError(path?: readonly (string | number)[]): GraphQLError {
  return new GraphQLError('Unexpected error.', { path, extensions: { code: 'INTERNAL_SERVER_ERROR', reasonCode: 'internal', status: 500 } });
}

interface ErrorLogger {
  error(obj: object, msg?: string): void;
}

/** The headers Hive's `propagateHeaders` put on this subgraph request (`extensions.headers`, which its HTTP transport sends). */
function propagatedHeaders(request: ExecutionRequest): Headers {
  const headers = new Headers();
  const propagated: unknown = request.extensions?.['headers'];
  if (typeof propagated === 'object' && propagated !== null) {
    for (const [name, value] of Object.entries(propagated)) if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/**
 * One subgraph context per (gateway operation, subgraph): a gateway operation that calls the same
 * subgraph several times (root fields, then `_entities`) shares one resolver context (one session
 * lookup, one unit of work, one result budget), like one request would on a monolith.
 */
const contexts = new WeakMap<object, Map<string, Promise<object>>>();

function subgraphContext(subgraph: InProcessSubgraph, request: ExecutionRequest): Promise<object> {
  const gatewayContext: unknown = request.context;
  if (typeof gatewayContext !== 'object' || gatewayContext === null) return Promise.resolve(subgraph.createContext(propagatedHeaders(request)));
  let perSubgraph = contexts.get(gatewayContext);
  if (!perSubgraph) {
    perSubgraph = new Map();
    contexts.set(gatewayContext, perSubgraph);
  }
  let context = perSubgraph.get(subgraph.name);
  if (!context) {
    context = Promise.resolve(subgraph.createContext(propagatedHeaders(request)));
    perSubgraph.set(subgraph.name, context);
  }
  return context;
}

/**
 * The errors of an in-process result as the gateway would get them over the wire: message, path and
 * extensions (`code`, `reasonCode`, `status` … intact) of errors the resolvers threw as GraphQLErrors;
 * anything else becomes an opaque INTERNAL_SERVER_ERROR and is logged with its stack.
 */
function wireErrors(result: ExecutionResult, subgraph: string, logger: ErrorLogger): SubgraphResult {
  if (!result.errors?.length) return result;
  // no data: the operation did not run, so its variables were refused (the planner sends only valid
  // documents): what the client sent, a 400 — without a reason the gateway took it for an outage (503)
  const refusedVariables = result.data === undefined;
  const errors = result.errors.map((error) => {
    const original = error.originalError;
    if (original && !(original instanceof GraphQLError)) {
      logger.error({ err: original, subgraph, path: error.path }, 'unexpected error in a subgraph resolver');
      return internalError(error.path);
    }
    const extensions =
      refusedVariables && error.extensions['reasonCode'] === undefined ? { ...error.extensions, code: 'BAD_USER_INPUT', reasonCode: 'illegalArguments', status: 400 } : error.extensions;
    return new GraphQLError(error.message, { path: error.path, extensions });
  });
  return { ...result, errors };
}

async function* mapAsyncIterable<T, U>(iterable: AsyncIterable<T>, map: (value: T) => U): AsyncIterable<U> {
  for await (const value of iterable) yield map(value);
}

/** One cache of compiled documents for the process (keyed by schema and document, both held weakly). */
const compiledExecution = new CompiledExecution();

/**
 * Executes a subgraph request in-process against the subgraph schema (queries and mutations through
 * CompiledExecution, subscriptions with graphql-js `subscribe`) with the subgraph's own context
 * (built from the headers Hive propagated), no HTTP and no serialization. The requests come from the gateway's query planner, which only emits valid
 * operations, so they are not validated again.
 */
export function inProcessExecutor(subgraph: InProcessSubgraph, logger: ErrorLogger) {
  const normalize = (result: ExecutionResult) => wireErrors(result, subgraph.name, logger);
  return async (request: ExecutionRequest): Promise<SubgraphResult | AsyncIterable<SubgraphResult>> => {
    let contextValue: object;
    try {
      contextValue = await subgraphContext(subgraph, request);
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [new GraphQLError(error.message, { extensions: error.extensions })] };
      logger.error({ err: error, subgraph: subgraph.name }, 'creating the subgraph context failed');
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
    return normalize(await compiledExecution.execute(args));
  };
}

/** The transport of subgraphs that run in this process (embedded mode): one executor per subgraph. */
export function inProcessTransport(subgraphs: ReadonlyMap<string, InProcessSubgraph>, logger: ErrorLogger): Transport {
  return {
    getSubgraphExecutor({ subgraphName }) {
      const subgraph = subgraphs.get(subgraphName.toLowerCase());
      if (!subgraph) throw new Error(`subgraph ${subgraphName} is not in this process`);
      const run = inProcessExecutor(subgraph, logger);
      return run;
    },
  };
}
