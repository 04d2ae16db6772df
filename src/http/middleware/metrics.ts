import type { Middleware } from 'koa';
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

/** Route groups keep label cardinality bounded (ids never become labels). */
function groupOf(path: string): string {
  if (path.includes('/graphql')) return 'graphql';
  const match = /\/api\/v1\/([^/]+)\/v1\/([^/]+)/.exec(path);
  if (match) return `${match[1]!.startsWith('access.svc.admin') ? 'admin' : 'content'}:${match[2]}`;
  if (path.includes('/api/v1/')) return 'session';
  return 'other';
}

export function useMetrics(): Middleware {
  return async (ctx, next) => {
    const end = requestDuration.startTimer({ group: groupOf(ctx.path), method: ctx.method });
    try {
      await next();
    } finally {
      end({ status: String(ctx.status) });
    }
  };
}
