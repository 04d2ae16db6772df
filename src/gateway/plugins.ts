import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { reasonOfStatus } from '../errors.js';
import { jsonValueProblem } from '../http/body.js';
import { missingSessionMessage } from '../modules/auth/index.js';

/** What /graphql accepts as a session, told with every 401 it answers. */
export const acceptedCredentials =
  'send the session id as the header "Authorization: Bearer <session id>" (over graphql-ws: the connection_init payload {"authorization": "Bearer <session id>"})';

/**
 * A POST is a GraphQL request as `application/json` only. That refuses what a browser sends
 * cross-site without a CORS preflight (form-encoded, multipart, text/plain), with which a page
 * elsewhere could run mutations (yoga's CSRF prevention plugin tests those, and would require a
 * custom header on every GET too: GET cannot run mutations, and GET queries stay open to clients that
 * cannot set headers); and every other type, which yoga either took (application/graphql) or
 * answered 415 with no body.
 */
export const useJsonPostsOnly: GatewayPlugin = {
  onRequestParse({ request }) {
    if (request.method !== 'POST') return;
    const type = request.headers.get('content-type')?.toLowerCase() ?? '';
    if (type.split(';')[0]!.trim() !== 'application/json') {
      throw new GraphQLError('POST a GraphQL request as application/json.', {
        extensions: { code: 'UNSUPPORTED_MEDIA_TYPE', reasonCode: 'unsupportedMediaType', status: 415, http: { status: 415 } },
      });
    }
  },
};

/**
 * A GET's `variables` and `extensions` must be JSON objects: yoga's parser let the SyntaxError of
 * `variables={bad` through as a 500 (and an error log line per request, for anyone).
 */
export const useWellFormedGetParameters: GatewayPlugin = {
  onRequestParse({ request }) {
    if (request.method !== 'GET') return;
    const parameters = new URL(request.url).searchParams;
    for (const name of ['variables', 'extensions']) {
      const text = parameters.get(name);
      if (text === null || text === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
        throw new GraphQLError(`The "${name}" parameter must be a JSON object.`, {
          extensions: { code: 'BAD_REQUEST', reasonCode: 'illegalArguments', status: 400, http: { status: 400 } },
        });
      }
    }
  },
};

/**
 * Refuses variables holding a number JSON cannot carry (`1e309` parses to Infinity) or nested deeper
 * than maxJsonDepth (the JSON scalars recurse through them). Checked once, at the gateway, before
 * execution: in split mode the gateway re-serialises variables for the subgraph, where Infinity would
 * already be `null` (which a PATCH reads as "remove"). Runs on every path into the pipeline (fast path,
 * runtime, graphql-ws, SSE, REST's execute).
 */
export const useSaneVariables: GatewayPlugin = {
  onExecute({ args, setResultAndStopExecution }) {
    const problem = jsonValueProblem(args.variableValues);
    if (problem) setResultAndStopExecution({ errors: [unusableVariables(problem)] });
  },
  onSubscribe({ args, setResultAndStopExecution }) {
    const problem = jsonValueProblem(args.variableValues);
    if (problem) setResultAndStopExecution({ errors: [unusableVariables(problem)] });
  },
};

const unusableVariables = (problem: string) =>
  new GraphQLError(`Variables: ${problem}.`, {
    extensions: { code: 'BAD_USER_INPUT', reasonCode: 'illegalArguments', status: 400, http: { status: 400 } },
  });

/** A subscription refused for want of a session (SSE: an error event; graphql-ws refuses at connection_init). */
export const subscriptionNeedsSession = (): ExecutionResult => ({
  errors: [
    new GraphQLError(`A subscription needs a valid session: ${acceptedCredentials}.`, {
      extensions: { code: 'UNAUTHENTICATED', reasonCode: 'notAuthenticated', status: 401, http: { status: 401 } },
    }),
  ],
});

/** Codes of errors in what the client sent (a subgraph's Apollo Server names an operation it cannot pick OPERATION_RESOLUTION_FAILURE). */
const requestErrorCodes = new Set(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE']);

/** Codes of Hive's transports and timeouts for a subgraph that cannot be reached, fails over HTTP, or does not answer in time. */
const unavailableCodes = new Set(['SUBREQUEST_HTTP_ERROR', 'DOWNSTREAM_SERVICE_ERROR', 'GATEWAY_TIMEOUT', 'TIMEOUT_ERROR', 'SERVICE_UNAVAILABLE']);

/**
 * Which reason code (and HTTP status) an error the runtime or a transport raised without one stands
 * for. `requestError`: the operation did not run (no `data`: variables that do not coerce …).
 */
function reasonOf(error: GraphQLError, requestError: boolean): { reasonCode: string; status: number } {
  const code = error.extensions['code'];
  if (requestError && code === undefined) return { reasonCode: 'illegalArguments', status: 400 };
  if (typeof code === 'string' && requestErrorCodes.has(code)) return { reasonCode: 'illegalArguments', status: 400 };
  // a subgraph that cannot be reached, refuses, or does not answer in time (upstreamTimeout)
  if (typeof code === 'string' && unavailableCodes.has(code)) return { reasonCode: 'unavailable', status: 503 };
  return { reasonCode: 'internal', status: 500 };
}

/** `error` with a reason code and status added to its extensions (its place in the document and path kept). */
function withReason(error: GraphQLError, extensions: Record<string, unknown>, reason: { reasonCode: string; status: number }): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...extensions, ...reason },
  });
}

/**
 * An error the runtime or a transport raised, given the reason code it lacks (`reasonOf`); the
 * transport's copy of the subgraph request and response are internals and go. `requestError`: the
 * operation did not run.
 */
function withReasonOf(error: GraphQLError, requestError: boolean): GraphQLError {
  if (error.extensions['reasonCode'] !== undefined) return error;
  const { request: _request, response: _response, ...extensions } = error.extensions;
  return withReason(error, extensions, reasonOf(error, requestError));
}

/** An error in what the client sent (the operation did not run), given the reason code it lacks. */
export const asRequestError = (error: GraphQLError): GraphQLError => withReasonOf(error, true);

/** An error without a reason code, given the one its HTTP status (yoga's `extensions.http.status`) stands for. */
function withReasonOfStatus(error: GraphQLError): GraphQLError {
  if (error.extensions?.['reasonCode'] !== undefined) return error;
  const status = (error.extensions?.['http'] as { status?: number } | undefined)?.status ?? 500;
  return withReason(error, error.extensions, { reasonCode: reasonOfStatus(status), status });
}

/**
 * The error contract of both APIs (REST maps from it): every error carries `extensions.reasonCode` and
 * `extensions.status`. Errors of the subgraphs have them; this adds them to what the runtime and its
 * transports raise (planning, unreachable subgraphs, timeouts), and tells HTTP clients without a
 * session what /graphql accepts.
 */
export function useErrorContract(): GatewayPlugin {
  const contractError = (error: GraphQLError, requestError: boolean, overHttp: boolean): GraphQLError => {
    const reasonCode = error.extensions['reasonCode'];
    if (reasonCode === undefined) return withReasonOf(error, requestError);
    // a missing or unknown session: how /graphql takes one (not REST's `sessionId`); a wrong password is no such case
    if (overHttp && reasonCode === 'notAuthenticated' && /session/.test(error.message) && !error.message.includes('connection_init')) {
      // the domain's words name REST's `sessionId` too
      const said = error.message === missingSessionMessage ? 'a session is required' : error.message;
      return new GraphQLError(`${said} (/graphql: ${acceptedCredentials})`, { path: error.path, extensions: error.extensions });
    }
    return error;
  };
  const needsMapping = (errors: readonly GraphQLError[] | undefined, overHttp: boolean) =>
    errors?.some((e) => e.extensions['reasonCode'] === undefined || (overHttp && e.extensions['reasonCode'] === 'notAuthenticated'));
  const mapResult = (result: ExecutionResult, overHttp: boolean): ExecutionResult | undefined => {
    if (!needsMapping(result.errors, overHttp)) return undefined;
    const requestError = result.data === undefined;
    return { ...result, errors: result.errors!.map((error) => contractError(error, requestError, overHttp)) };
  };
  // REST's execute() runs without a client request: its own messages say what it accepts
  const isOverHttp = (contextValue: unknown) => typeof contextValue === 'object' && contextValue !== null && 'req' in contextValue;
  return {
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(contractError(result, true, false));
      };
    },
    onValidate() {
      // errors of validation (and of our validation rules that lack a reason) are request errors: 400
      return ({ valid, result, setResult }) => {
        if (valid) return;
        const errors = result.filter((error): error is GraphQLError => error instanceof GraphQLError);
        if (needsMapping(errors, false)) setResult(result.map((error) => (error instanceof GraphQLError ? contractError(error, true, false) : error)));
      };
    },
    onExecute({ args }) {
      const overHttp = isOverHttp(args.contextValue);
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const mapped = mapResult(result, overHttp);
          if (mapped) setResult(mapped);
        },
      };
    },
    onSubscribe({ args }) {
      const overHttp = isOverHttp(args.contextValue);
      // a refused subscription (variables that do not coerce, …) and every event's errors
      return {
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) {
            const mapped = mapResult(result, overHttp);
            if (mapped) setResult(mapped);
            return;
          }
          return {
            onNext({ result: event, setResult: setEvent }) {
              const mapped = mapResult(event, overHttp);
              if (mapped) setEvent(mapped);
            },
          };
        },
      };
    },
    // what yoga refuses before any GraphQL runs (a method, a body, a missing query): its errors carry an HTTP status only
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const single = result as ExecutionResult;
      if (!single.errors?.some((error) => error.extensions?.['reasonCode'] === undefined)) return;
      setResult({ ...single, errors: single.errors.map(withReasonOfStatus) });
    },
    onResponse({ response }) {
      if (response.status === 401) response.headers.set('www-authenticate', 'Bearer');
    },
  };
}
