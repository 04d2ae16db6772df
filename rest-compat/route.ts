import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Context } from 'koa';
import type { Services } from '../src/context.js';
import type { RestInputs } from './inputs.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply {
  status?: number;
  body?: unknown;
  /** the media type of a body that is not JSON (a page: the deep check report) */
  type?: string;
  headers?: Record<string, string>;
}

/** What a route's input step may use beside the request. */
export interface RouteTools {
  services: Services;
  inputs: RestInputs;
}

/** Runs a typed document through the gateway as the request's session; a GraphQL error is thrown as a ServiceError. */
export type RunDocument = <Result, Variables extends Record<string, unknown>>(document: TypedDocumentNode<Result, Variables>, variables: Variables) => Promise<Result>;

/**
 * One row of the REST table: a path under `{base_url}/api/v1`, the typed GraphQL document it runs
 * (generated from `operations/*.graphql`), how validated request input becomes the document's
 * variables, and how the document's result becomes the spec's response. The document's types flow
 * through: variables and reply are checked against the schema by tsc.
 */
export interface GraphqlRoute<Input, Result, Variables extends Record<string, unknown>> {
  method: HttpMethod;
  path: string;
  document: TypedDocumentNode<Result, Variables>;
  /** validates the request (query, path params, body) once; throws a 400 ServiceError */
  input: (ctx: Context, params: Record<string, string>, tools: RouteTools) => Input | Promise<Input>;
  variables: (input: Input) => Variables;
  reply: (result: Result, input: Input) => Reply;
  /** undoes what `input` did when the operation fails (for example a staged upload) */
  onFailure?: (input: Input, services: Services) => Promise<void>;
}

/** A row with its types sealed in: the router only mounts and runs it. */
export interface RestRoute {
  method: HttpMethod;
  path: string;
  handle(ctx: Context, tools: RouteTools, run: RunDocument): Promise<Reply>;
}

export function route<Input, Result, Variables extends Record<string, unknown>>(definition: GraphqlRoute<Input, Result, Variables>): RestRoute {
  return {
    method: definition.method,
    path: definition.path,
    async handle(ctx, tools, run) {
      const input = await definition.input(ctx, ctx.params as Record<string, string>, tools);
      let result: Result;
      try {
        result = await run(definition.document, definition.variables(input));
      } catch (error) {
        await definition.onFailure?.(input, tools.services);
        throw error;
      }
      return definition.reply(result, input);
    },
  };
}

export { adminDomain, contentDomain } from '../src/http/session.js';
