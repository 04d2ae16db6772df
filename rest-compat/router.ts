import Router from '@koa/router';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import type { RequestContext, Services } from '../src/context.js';
import { illegalArguments, reasonStatus, ServiceError, type ReasonCode } from '../src/errors.js';
import type { Gateway } from '../src/gateway/gateway.js';
import { sessionHeaders } from '../src/http/session.js';
import { requestContextOf } from '../src/http/transfer.js';
import { requireRole } from '../src/modules/access/index.js';
import { InputSchemas } from './inputs.js';
import { callerRule, openApiDocument, type CallerRule, type OperationDeclaration } from './openapi.js';
import { discardStaged, readRequest } from './request.js';
import type { DeclaredRoute, RestRoute, RunDocument } from './route.js';

const isReasonCode = (code: unknown): code is ReasonCode => typeof code === 'string' && code in reasonStatus;

/**
 * The REST error a GraphQL error stands for, by its extensions only (never by its message): the reason
 * code the domain gave it (src/errors.ts), or GraphQL's own BAD_USER_INPUT. Undefined: not a known
 * failure (the caller answers 500 and logs it).
 */
export function restErrorOf(error: GraphQLFormattedError): ServiceError | undefined {
  const { reasonCode, code, details, retryAfter } = (error.extensions ?? {}) as { reasonCode?: unknown; code?: unknown; details?: unknown; retryAfter?: unknown };
  const reason = [reasonCode, code].find(isReasonCode);
  if (reason) {
    return new ServiceError(reason, error.message, typeof details === 'string' ? details : undefined, typeof retryAfter === 'number' ? retryAfter : undefined);
  }
  if (code === 'BAD_USER_INPUT') return illegalArguments(error.message);
  return undefined;
}

export interface RestRouterOptions {
  gateway: Gateway;
  services: Services;
  /** the schemas whose input types REST fills (the subgraphs': their scalars validate) */
  schemas: readonly GraphQLSchema[];
  routes: readonly RestRoute[];
  prefix: string;
  /** paths served by other routers that the OpenAPI document describes too (the byte transfer) */
  otherOperations?: readonly OperationDeclaration[];
  /** the service's version, the document's */
  version: string;
}

/** The table's routes declared against the GraphQL input types of `schemas` (their request schemas made once, at start). */
export const declareRoutes = (routes: readonly RestRoute[], schemas: readonly GraphQLSchema[]): DeclaredRoute[] => {
  const inputs = new InputSchemas(schemas);
  return routes.map((row) => row.declare(inputs));
};


/**
 * The caller's right to the path, before anything of the request is read: without a session a bad
 * body is a 401, and a user's a 403, not a 400 about the body. The operation checks again (GraphQL
 * clients go there directly); the session is cached, so this costs no query.
 */
async function requireCaller(context: RequestContext, rule: CallerRule): Promise<void> {
  const principal = await context.principal();
  if (rule === 'admin') requireRole(principal, 'ADMIN');
}

/**
 * `tags[]=a` is how some clients write a list; here it is `tags=a&tags=b`. Left alone, the bracketed
 * name matched no parameter and the search answered everything.
 */
function refuseBracketedParameters(ctx: Context): void {
  const bracketed = Object.keys(ctx.query).filter((name) => name.endsWith('[]'));
  if (bracketed.length > 0) {
    throw illegalArguments(`parameter ${bracketed.map((name) => `'${name}'`).join(', ')}: repeat a list parameter without brackets (tags=a&tags=b)`);
  }
}

/** Mounts every row of the table: validate against its declaration → run its typed GraphQL document through the gateway → reply. */
export function restRouter({ gateway, services, schemas, routes, prefix, otherOperations = [], version }: RestRouterOptions): Router {
  const declared = declareRoutes(routes, schemas);
  const document = JSON.stringify(openApiDocument([...declared, ...otherOperations], { basePath: services.config.BASE_PATH, version }));
  const texts = new WeakMap<DocumentNode, string>();
  const textOf = (document: DocumentNode) => {
    let text = texts.get(document);
    if (text === undefined) texts.set(document, (text = print(document)));
    return text;
  };
  /** `run` for one request, as its session (its headers made only when a document runs: the hot reads and searches run none) */
  const runner = (ctx: Context): RunDocument => {
    return async <Result, Variables extends Record<string, unknown>>(document: TypedDocumentNode<Result, Variables>, variables: Variables) => {
      const result = await gateway.execute({ document: textOf(document), variables, headers: sessionHeaders(ctx) });
      if (result.errors?.length) {
        const known = restErrorOf(result.errors[0]!);
        if (known) throw known;
        ctx.state.log?.error({ errors: result.errors }, 'GraphQL operation failed');
        throw new ServiceError('internal', 'internal error');
      }
      // what the document's selection answers, as its generated type states
      return result.data as Result;
    };
  };
  const router = new Router({ prefix });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('cache-control', 'no-cache');
    ctx.body = document;
  });
  for (const row of declared) {
    const caller = callerRule(row.path);
    router.register(row.path, [row.method], async (ctx) => {
      // one context per call: the caller check, the route and an upload's byte handling share its unit of work and session
      const context = requestContextOf(ctx, services);
      if (caller !== 'anyone') await requireCaller(context, caller);
      refuseBracketedParameters(ctx);
      const request = await readRequest(ctx, services, row.path, row.request);
      let reply;
      try {
        reply = await row.handle(request, ctx, { context, run: runner(ctx) });
      } catch (error) {
        await discardStaged(request);
        throw error;
      }
      ctx.status = reply.status ?? 200;
      if (reply.headers) ctx.set(reply.headers);
      if (reply.body !== undefined) {
        ctx.type = reply.type ?? 'application/json';
        ctx.body = reply.body;
      }
    });
  }
  return router;
}
