import Router from '@koa/router';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { errorBody, reasonStatus, type ReasonCode } from '../src/errors.js';
import type { Services } from '../src/context.js';
import type { Gateway } from '../src/gateway/gateway.js';
import { documentFor } from './documents.js';
import { sessionHeaders } from '../src/http/session.js';
import type { GraphqlRoute } from './route.js';

/** GraphQL errors carry the reason code and status the domain gave them (src/errors.ts). */
function failure(errors: readonly GraphQLFormattedError[]) {
  const first = errors[0]!;
  const extensions = (first.extensions ?? {}) as { reasonCode?: string; status?: number; details?: string; code?: string };
  if (extensions.reasonCode && extensions.status) {
    return errorBody(extensions.status, extensions.reasonCode, first.message, extensions.details);
  }
  // a variable the document rejects (for example an enum value) is the caller's mistake
  if (extensions.code === 'BAD_USER_INPUT' || /^Variable "\$/.test(first.message)) {
    return errorBody(400, 'illegalArguments', first.message);
  }
  const known = extensions.code && extensions.code in reasonStatus ? (extensions.code as ReasonCode) : undefined;
  if (known) return errorBody(reasonStatus[known], known, first.message);
  return errorBody(500, 'internal', 'internal error');
}

/** Mounts every row of the table: validate → run its GraphQL document through the gateway → reply. */
export function restRouter(gateway: Gateway, services: Services, routes: GraphqlRoute[], prefix: string): Router {
  const router = new Router({ prefix });
  for (const definition of routes) {
    const document = documentFor(definition.operation);
    router.register(definition.path, [definition.method], async (ctx) => {
      const input = await definition.input(ctx, ctx.params as Record<string, string>, services);
      let result: ExecutionResult;
      try {
        result = await gateway.execute({ document, variables: definition.variables(input), headers: sessionHeaders(ctx) });
      } catch (error) {
        await definition.onFailure?.(input, services);
        throw error;
      }
      if (result.errors?.length) {
        await definition.onFailure?.(input, services);
        const body = failure(result.errors);
        if (body.status === 500) ctx.state.log?.error({ errors: result.errors }, 'GraphQL operation failed');
        const retryAfter = result.errors[0]!.extensions?.retryAfter;
        if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
        ctx.status = body.status;
        ctx.body = body;
        return;
      }
      const reply = definition.reply((result.data as { result?: unknown; [key: string]: unknown })?.result ?? Object.values(result.data ?? {})[0], input);
      ctx.status = reply.status ?? 200;
      if (reply.body !== undefined) {
        ctx.type = 'application/json';
        ctx.body = reply.body;
      }
    });
  }
  return router;
}
