import Router from '@koa/router';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import type { Services } from '../src/context.js';
import { illegalArguments, reasonStatus, ServiceError, type ReasonCode } from '../src/errors.js';
import type { Gateway } from '../src/gateway/gateway.js';
import { sessionHeaders } from '../src/http/session.js';
import { RestInputs } from './inputs.js';
import type { RestRoute, RunDocument } from './route.js';

const isReasonCode = (code: unknown): code is ReasonCode => typeof code === 'string' && code in reasonStatus;

/**
 * A GraphQL error as the REST error it stands for, by its extensions only: the reason code the domain
 * gave it (src/errors.ts), or a GraphQL input error. Anything else is an internal error (logged).
 */
function restError(errors: readonly GraphQLFormattedError[], ctx: Context): ServiceError {
  const first = errors[0]!;
  const { reasonCode, code, details } = (first.extensions ?? {}) as { reasonCode?: unknown; code?: unknown; details?: unknown };
  const reason = [reasonCode, code].find(isReasonCode);
  if (reason) return new ServiceError(reason, first.message, typeof details === 'string' ? details : undefined);
  if (code === 'BAD_USER_INPUT') return illegalArguments(first.message);
  ctx.state.log?.error({ errors }, 'GraphQL operation failed');
  return new ServiceError('internal', 'internal error');
}

export interface RestRouterOptions {
  gateway: Gateway;
  services: Services;
  /** the schemas whose input types REST fills (the subgraphs': their scalars validate) */
  schemas: readonly GraphQLSchema[];
  routes: readonly RestRoute[];
  prefix: string;
}

/** Mounts every row of the table: validate → run its typed GraphQL document through the gateway → reply. */
export function restRouter({ gateway, services, schemas, routes, prefix }: RestRouterOptions): Router {
  const tools = { services, inputs: new RestInputs(schemas) };
  const texts = new WeakMap<DocumentNode, string>();
  const textOf = (document: DocumentNode) => {
    let text = texts.get(document);
    if (text === undefined) texts.set(document, (text = print(document)));
    return text;
  };
  /** `run` for one request: its session (checked before anything of the request is read) and logger */
  const runner = (ctx: Context): RunDocument => {
    const headers = sessionHeaders(ctx);
    return async <Result, Variables extends Record<string, unknown>>(document: TypedDocumentNode<Result, Variables>, variables: Variables) => {
      const result = await gateway.execute({ document: textOf(document), variables, headers });
      if (result.errors?.length) throw restError(result.errors, ctx);
      // what the document's selection answers, as its generated type states
      return result.data as Result;
    };
  };
  const router = new Router({ prefix });
  for (const row of routes) {
    router.register(row.path, [row.method], async (ctx) => {
      const reply = await row.handle(ctx, tools, runner(ctx));
      ctx.status = reply.status ?? 200;
      if (reply.body !== undefined) {
        ctx.type = 'application/json';
        ctx.body = reply.body;
      }
    });
  }
  return router;
}
