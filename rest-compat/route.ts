import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { RequestContext } from '../src/context.js';
import type { InputSchemas } from './inputs.js';
import type { ReceivedUpload } from './request.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply {
  status?: number;
  body?: unknown;
  /** the media type of a body that is not JSON (a page: the deep check report) */
  type?: string;
  headers?: Record<string, string>;
}

/**
 * A request body as a route declares it: its schema validates it and describes it in the OpenAPI
 * document. `json`: a JSON object; `form`: form fields, url-encoded or multipart without a file (or a
 * JSON object of them); `upload`: multipart with a part `file` streamed into a pending upload of the
 * caller, and text fields (`orFields`: or no file at all, the fields as a form, JSON or nothing;
 * `held`: the file's bytes held for a verb that writes them with its row, no pending upload).
 */
export type BodyDeclaration =
  | { kind: 'json'; schema: z.ZodType }
  | { kind: 'form'; schema: z.ZodObject }
  | { kind: 'upload'; schema: z.ZodObject; file: 'required' | 'optional'; orFields?: boolean; held?: boolean };

/** What a request may carry beside its path: query parameters (the session is not one of them: it is the security scheme) and a body. */
export interface RequestDeclaration {
  query?: z.ZodObject;
  body?: BodyDeclaration;
}

/** A declared answer: a JSON body's schema, another media type's, or none (204). */
export type ResponseDeclaration = z.ZodType | { type: string; schema: z.ZodType } | null;

/** The answers of a route that succeeded, by status; the error answers are added by kind of route (openapi.ts). */
export type Responses = Partial<Record<200 | 201 | 204, ResponseDeclaration>>;

type BodyOf<B> = B extends { kind: 'upload'; schema: infer S extends z.ZodType }
  ? { fields: z.output<S>; upload: ReceivedUpload }
  : B extends { schema: infer S extends z.ZodType }
    ? z.output<S>
    : undefined;

/** A request validated against its route's declaration: the path's parameters, the query, the body. */
export interface ParsedRequest<R extends RequestDeclaration> {
  params: Record<string, string>;
  query: R['query'] extends z.ZodObject ? z.output<R['query']> : Record<string, never>;
  body: BodyOf<R['body']>;
}

/** Runs a typed document through the gateway as the request's session; a GraphQL error is thrown as a ServiceError. */
export type RunDocument = <Result, Variables extends Record<string, unknown>>(document: TypedDocumentNode<Result, Variables>, variables: Variables) => Promise<Result>;

/** The OpenAPI words of a route: what it does, in a line, and more if needed. */
export interface RouteDescription {
  summary: string;
  description?: string;
}

/** What every kind of row declares: where, what it takes and answers, in the OpenAPI document's words. */
interface RowDeclaration<R extends RequestDeclaration> extends RouteDescription {
  method: HttpMethod;
  path: string;
  /** made at start from the GraphQL input types (REST accepts what GraphQL accepts) */
  request?: (inputs: InputSchemas) => R;
  responses: Responses;
}

/**
 * One row of the REST table: a path under `{base_url}/api/v1`, what its request may carry and what it
 * answers (zod schemas: they validate the request and make the OpenAPI document, openapi.ts), the
 * typed GraphQL document it runs (generated from `operations/*.graphql`), how the validated request
 * becomes the document's variables, and how the document's result becomes the spec's response. The
 * document's types flow through: variables and reply are checked against the schema by tsc.
 */
export interface GraphqlRoute<R extends RequestDeclaration, Result, Variables extends Record<string, unknown>> extends RowDeclaration<R> {
  document: TypedDocumentNode<Result, Variables>;
  /** `declared`: what `request` made (a route may keep the schemas of groups of its parameters there) */
  variables: (request: ParsedRequest<R>, declared: R) => Variables;
  reply: (result: Result, request: ParsedRequest<R>) => Reply;
}

/**
 * What a row runs with beside its request: the caller's context (its session, resolved before the
 * request was read) for a domain operation, and `run` for a typed document through the gateway.
 */
export interface RouteCall {
  context: RequestContext;
  run: RunDocument;
}

/** A row whose request schemas are made, its types sealed in: the router mounts and runs it, the document describes it. */
export interface DeclaredRoute extends RouteDescription {
  method: HttpMethod;
  path: string;
  request: RequestDeclaration;
  responses: Responses;
  handle(request: ParsedRequest<RequestDeclaration>, ctx: Context, call: RouteCall): Promise<Reply>;
}

/** A row of the table: its answers, and the rest declared once the GraphQL input types are known. */
export interface RestRoute {
  method: HttpMethod;
  path: string;
  responses: Responses;
  declare(inputs: InputSchemas): DeclaredRoute;
}

/** A row of the table from its declaration and how a validated request is answered. */
function tableRow<R extends RequestDeclaration>(definition: RowDeclaration<R>, answer: (request: ParsedRequest<R>, call: RouteCall, declared: R) => Promise<Reply>): RestRoute {
  const { method, path, summary, description, responses } = definition;
  return {
    method,
    path,
    responses,
    declare(inputs) {
      const declared = definition.request?.(inputs) ?? ({} as R);
      return {
        method,
        path,
        summary,
        description,
        responses,
        request: declared,
        // the router validated the request against the declaration this route made
        handle: (request, _ctx, call) => answer(request as ParsedRequest<R>, call, declared),
      };
    },
  };
}

export function route<R extends RequestDeclaration, Result, Variables extends Record<string, unknown>>(definition: GraphqlRoute<R, Result, Variables>): RestRoute {
  return tableRow(definition, async (request, { run }, declared) => definition.reply(await run(definition.document, definition.variables(request, declared)), request));
}

/**
 * A row of the table that calls its domain operation directly instead of a GraphQL document: the hot
 * reads (GET of a folder or content), where running a document through the gateway cost most of the
 * request (docs/api.md, "Hot reads"), and the create (POST C/content), whose verb writes the bytes the
 * request received with its row instead of claiming a pending upload (docs/api.md, "Uploads"). The
 * operation is the one the GraphQL resolver of the same verb calls, and a test holds both paths to the
 * same answers (test/rest/hot-reads.test.ts, test/rest/create-direct.test.ts).
 */
export interface OperationRoute<R extends RequestDeclaration, Result> extends RowDeclaration<R> {
  /** the domain operation, as the caller of the request (its errors are the REST errors as they are) */
  operation: (context: RequestContext, request: ParsedRequest<R>) => Promise<Result>;
  reply: (result: Result, request: ParsedRequest<R>) => Reply;
}

export function operationRoute<R extends RequestDeclaration, Result>(definition: OperationRoute<R, Result>): RestRoute {
  return tableRow(definition, async (request, { context }) => definition.reply(await definition.operation(context, request), request));
}

/**
 * A row that calls its domain operation directly (as operationRoute) for the requests `operation`
 * answers, and runs its GraphQL document for the others (`operation` answers undefined): the searches,
 * whose page of 100 entries cost about twice as much node CPU through GraphQL as reading it
 * (docs/benchmarks.md), leave the virtual `Folder.children` to their document. A test holds both paths
 * to the same answers (test/rest/search-direct.test.ts).
 */
export interface DirectRoute<R extends RequestDeclaration, Result, DocumentResult extends Result, Variables extends Record<string, unknown>> extends GraphqlRoute<R, Result, Variables> {
  document: TypedDocumentNode<DocumentResult, Variables>;
  operation: (context: RequestContext, request: ParsedRequest<R>, declared: R) => Promise<Result> | undefined;
}

export function directRoute<R extends RequestDeclaration, Result, DocumentResult extends Result, Variables extends Record<string, unknown>>(
  definition: DirectRoute<R, Result, DocumentResult, Variables>,
): RestRoute {
  return tableRow(definition, async (request, { context, run }, declared) =>
    definition.reply(await (definition.operation(context, request, declared) ?? run(definition.document, definition.variables(request, declared))), request),
  );
}

export { adminDomain, contentDomain } from '../src/http/session.js';
