import { reasonOfStatus } from '../errors.js';
import { BodyTooLargeError, InvalidUtf8Error, readBoundedText } from '../http/body.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';

/**
 * The GraphQL-over-HTTP fast path: a POST of a JSON query or mutation from a non-browser client is
 * answered without the runtime's WHATWG Request/Response adapter (which costs more than planning and
 * executing a small operation), but through the very same envelop pipeline (parse/validate caches,
 * limits, masking, planning, subgraph hooks) — see `runOperation` in gateway.ts. Everything else
 * (GET, SSE and multipart, GraphiQL, CORS requests carrying an Origin, odd content types or
 * encodings) goes to the runtime unchanged. Status codes follow the GraphQL-over-HTTP spec: with
 * `application/graphql-response+json`, 400 for request errors (parse, validation, variable
 * coercion); with `application/json`, 200.
 */

type ResponseMediaType = 'application/json' | 'application/graphql-response+json';

export interface OperationParams {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
}

export interface OperationOutcome {
  result: ExecutionResult;
  /** the operation failed before execution (parse, validation, variables): no `data` */
  requestError: boolean;
}

/** The response media type when the fast path can serve this request, else undefined. */
function fastPathMediaType(req: IncomingMessage, graphqlEndpoint: string): ResponseMediaType | undefined {
  if (req.method !== 'POST' || req.headers.origin !== undefined) return undefined;
  if (req.url !== graphqlEndpoint) return undefined; // a query string or another path: let the runtime decide
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return undefined;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value?.trim().replace(/"/g, '').toLowerCase() !== 'utf-8') return undefined;
  }
  const accept = req.headers.accept;
  if (!accept) return 'application/json';
  if (/text\/event-stream|multipart\/mixed/i.test(accept)) return undefined;
  for (const entry of accept.split(',')) {
    const [media, ...rest] = entry.split(';');
    if (rest.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(p))) continue;
    switch (media?.trim().toLowerCase()) {
      case 'application/graphql-response+json':
        return 'application/graphql-response+json';
      case 'application/json':
      case 'application/*':
      case '*/*':
        return 'application/json';
    }
  }
  return undefined; // nothing we serve is acceptable: the runtime answers 406
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  try {
    return await readBoundedText(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new HttpError(413, 'Request body is too large.');
    if (error instanceof InvalidUtf8Error) throw new HttpError(400, 'The request body is not valid UTF-8.');
    throw error;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function toParams(body: unknown): OperationParams {
  if (!isRecord(body)) throw new HttpError(400, 'The request body must be a JSON object.');
  const { query, variables, operationName, extensions } = body;
  if (typeof query !== 'string') throw new HttpError(400, 'The "query" parameter must be a string.');
  if (variables != null && !isRecord(variables)) throw new HttpError(400, 'The "variables" parameter must be an object.');
  if (operationName != null && typeof operationName !== 'string') throw new HttpError(400, 'The "operationName" parameter must be a string.');
  if (extensions != null && !isRecord(extensions)) throw new HttpError(400, 'The "extensions" parameter must be an object.');
  return {
    query,
    variables: variables ?? undefined,
    operationName: operationName ?? undefined,
    extensions: extensions ?? undefined,
  };
}

/** Serialized as yoga does: `extensions.http` and `extensions.unexpected` are internal. */
function serializeError(error: GraphQLError | Record<string, unknown>): Record<string, unknown> {
  const json = (typeof (error as GraphQLError).toJSON === 'function' ? (error as GraphQLError).toJSON() : { ...error }) as Record<string, unknown>;
  const extensions = json['extensions'] as Record<string, unknown> | undefined;
  if (extensions && ('http' in extensions || 'unexpected' in extensions)) {
    const { http: _http, unexpected: _unexpected, ...rest } = extensions;
    if (Object.keys(rest).length > 0) json['extensions'] = rest;
    else delete json['extensions'];
  }
  return json;
}

/** `extensions.http.status` of errors (as yoga: the spec-mandated ones do not apply to application/json) */
function httpStatusOf(errors: readonly GraphQLError[] | undefined, mediaType: ResponseMediaType): number | undefined {
  let status: number | undefined;
  for (const error of errors ?? []) {
    const http = error.extensions?.['http'] as { status?: number; spec?: boolean } | undefined;
    if (http?.spec && mediaType === 'application/json') continue;
    if (http?.status && (!status || http.status > status)) status = http.status;
  }
  return status;
}

function send(res: ServerResponse, status: number, mediaType: ResponseMediaType, payload: unknown, requestId: string): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, {
    'content-type': `${mediaType}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

interface FastPathOptions {
  graphqlEndpoint: string;
  maxBodyBytes: number;
  run: (req: IncomingMessage, res: ServerResponse, params: OperationParams) => Promise<OperationOutcome>;
  onUnexpected: (error: unknown) => void;
}

/** Serves one eligible request (see fastPathMediaType); never throws. */
async function serveFastPath(
  req: IncomingMessage,
  res: ServerResponse,
  mediaType: ResponseMediaType,
  requestId: string,
  options: FastPathOptions,
): Promise<void> {
  let params: OperationParams;
  try {
    const text = await readBody(req, options.maxBodyBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'The request body is not valid JSON.');
    }
    params = toParams(body);
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 400;
    const message = error instanceof HttpError ? error.message : 'The request body could not be read.';
    // the error contract of both APIs: a reason code and the status (useErrorContract adds them on the runtime's path)
    const extensions = { code: 'BAD_REQUEST', reasonCode: reasonOfStatus(status), status };
    if (!res.headersSent && !res.destroyed) send(res, status, mediaType, { errors: [{ message, extensions }] }, requestId);
    return;
  }
  try {
    const { result, requestError } = await options.run(req, res, params);
    let status = httpStatusOf(result.errors, mediaType);
    if (!status) status = requestError && mediaType === 'application/graphql-response+json' ? 400 : 200;
    const payload = result.errors?.length ? { ...result, errors: result.errors.map((e) => serializeError(e)) } : result;
    send(res, status, mediaType, payload, requestId);
  } catch (error) {
    options.onUnexpected(error);
    if (!res.headersSent && !res.destroyed) {
      const masked = new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR', reasonCode: 'internal', status: 500 } });
      send(res, 500, mediaType, { errors: [masked.toJSON()] }, requestId);
    }
  }
}

/**
 * The fast path as a Node request handler in front of the runtime: answers true when it served the
 * request, false when the runtime must (everything but a plain JSON POST from a non-browser client).
 * Off with GATEWAY_HTTP_FAST_PATH=false; its gain is in docs/benchmarks.md.
 *
 * A documented exception to "through the runtime's HTTP layer": it skips yoga's Request/Response
 * adapter, hence its `onRequest` / `onRequestParse` / `onResponse` hooks — CORS (never needed: a
 * request with an Origin goes to the runtime), the CSRF check (only application/json is taken) and
 * Hive's request id (the id is set on the request and echoed here). Every GraphQL and subgraph hook
 * (parse, validate, execute, onSubgraphExecute, onFetch, propagateHeaders, upstreamTimeout) runs.
 */
export function useHttpFastPath(options: FastPathOptions): (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<boolean> {
  return async (req, res, requestId) => {
    const mediaType = fastPathMediaType(req, options.graphqlEndpoint);
    if (!mediaType) return false;
    await serveFastPath(req, res, mediaType, requestId, options);
    return true;
  };
}
