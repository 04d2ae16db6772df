import type { Context } from 'koa';
import type { Services } from '../src/context.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply {
  status?: number;
  body?: unknown;
}

/**
 * One row of the REST table: a path under `{base_url}/api/v1`, the GraphQL document it runs
 * (`operations/<operation>.graphql`), how validated request input becomes variables, and how the result
 * becomes the spec's response.
 */
export interface GraphqlRoute<Input = unknown> {
  method: HttpMethod;
  path: string;
  operation: string;
  /** validates the request (query, path params, body) once; throws a 400 ServiceError */
  input: (ctx: Context, params: Record<string, string>, services: Services) => Input | Promise<Input>;
  variables: (input: Input) => Record<string, unknown>;
  reply: (result: unknown, input: Input) => Reply;
  /** undoes what `input` did when the operation fails (for example a staged upload) */
  onFailure?: (input: Input, services: Services) => Promise<void>;
}

export const route = <Input>(definition: GraphqlRoute<Input>): GraphqlRoute<unknown> => definition as GraphqlRoute<unknown>;

export { adminDomain, contentDomain } from '../src/http/session.js';
