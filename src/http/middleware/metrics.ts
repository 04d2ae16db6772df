import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { bearerToken } from '../../context.js';
import { errorBody } from '../../errors.js';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by route group, method and status',
  labelNames: ['group', 'method', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [metricsRegistry],
});

/**
 * Route groups keep label cardinality bounded: read from the route that answered (its pattern, never
 * the path: ids and whatever a client makes up never become labels), `unmatched` when none did.
 */
function groupOf(path: string, matchedRoute: unknown): string {
  if (path.includes('/graphql')) return 'graphql';
  if (typeof matchedRoute !== 'string') return 'unmatched';
  const match = /\/api\/v1\/([^/]+)\/v1\/([^/]+)/.exec(matchedRoute);
  if (match) return `${match[1]!.startsWith('access.svc.admin') ? 'admin' : 'content'}:${match[2]}`;
  if (matchedRoute.includes('/api/v1/')) return 'session';
  return 'other';
}

export function useMetrics(): Middleware {
  return async (ctx, next) => {
    const end = requestDuration.startTimer();
    try {
      await next();
    } finally {
      // @koa/router names the pattern it matched
      end({ group: groupOf(ctx.path, (ctx as { _matchedRoute?: unknown })._matchedRoute), method: ctx.method, status: String(ctx.status) });
    }
  };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `METRICS_TOKEN` set: /metrics answers only `Authorization: Bearer <token>` (401 otherwise); unset: open. */
export function requireMetricsToken(token: string | undefined): Middleware {
  const expected = token === undefined ? undefined : digest(token);
  return async (ctx, next) => {
    if (expected) {
      const offered = bearerToken(ctx.get('authorization'));
      // compared as digests: equal lengths, and no timing hint about the token
      if (!offered || !timingSafeEqual(digest(offered), expected)) {
        ctx.status = 401;
        ctx.set('www-authenticate', 'Bearer realm="metrics"');
        ctx.body = errorBody(401, 'notAuthenticated', '/metrics needs the header "Authorization: Bearer <METRICS_TOKEN>"');
        return;
      }
    }
    await next();
  };
}
