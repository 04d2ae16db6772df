import Router from '@koa/router';
import Koa from 'koa';
import type { Services } from '../context.js';
import type { Gateway } from '../gateway/gateway.js';
import { checkHealth } from '../modules/health/index.js';
import { errorBody, reasonOfStatus } from '../errors.js';
import { useAuthenticationChallenge } from './middleware/authentication-challenge.js';
import { useUnencodedBodies } from './middleware/content-encoding.js';
import { useHostHeader } from './middleware/host-header.js';
import { useHttp1 } from './middleware/http-version.js';
import { useUtf8Urls } from './middleware/utf8-urls.js';
import { useBodyIdleTimeout } from './middleware/body-idle-timeout.js';
import { useErrorBody } from './middleware/errors.js';
import { metricsRegistry, requireMetricsToken, useMetrics } from './middleware/metrics.js';
import { useRequestId, type RequestState } from './middleware/request-id.js';

export interface HttpAppParts {
  services: Services;
  gateway?: Gateway;
  /** ROLE=content|admin|health: one subgraph over HTTP */
  subgraphMiddleware?: Koa.Middleware;
  /** served beside the gateway: binary transfer (upload, download) and the REST layer */
  routers?: Router[];
}

/** The Koa app: cross-cutting middleware, then operations endpoints, GraphQL and the REST layer. */
export function createHttpApp(parts: HttpAppParts): Koa<RequestState> {
  const { services, gateway } = parts;
  const base = services.config.BASE_PATH;
  const app = new Koa<RequestState>({ proxy: false });
  app.silent = true;
  app.use(useRequestId(services.logger, { behindGateway: parts.subgraphMiddleware !== undefined }));
  app.use(useMetrics());
  app.use(useAuthenticationChallenge());
  app.use(useErrorBody());
  app.use(useBodyIdleTimeout());
  app.use(useUnencodedBodies());
  app.use(useHttp1());
  app.use(useHostHeader());
  app.use(useUtf8Urls());

  const operations = new Router<RequestState>({ prefix: base });
  operations.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  operations.get('/readyz', async (ctx) => {
    const health = await checkHealth(services);
    ctx.status = health.status === 'ok' ? 200 : 503;
    ctx.body = health;
  });
  operations.get('/metrics', requireMetricsToken(services.config.METRICS_TOKEN), async (ctx) => {
    ctx.type = metricsRegistry.contentType;
    ctx.body = await metricsRegistry.metrics();
  });
  if (gateway) {
    operations.all('/graphql', async (ctx) => {
      ctx.respond = false;
      await gateway.handle(ctx.req, ctx.res);
    });
  }
  app.use(operations.routes());
  if (parts.subgraphMiddleware) app.use(parts.subgraphMiddleware);
  for (const router of parts.routers ?? []) {
    app.use(router.routes());
    app.use(withErrorBody(router.allowedMethods()));
  }
  return app;
}

/**
 * The router's 405 (with the `Allow` header RFC 9110 asks for: thrown, the router left it out) and
 * 501, with the error body of every other error.
 */
function withErrorBody(allowedMethods: ReturnType<Router['allowedMethods']>): Koa.Middleware {
  return async (ctx, next) => {
    await (allowedMethods as unknown as Koa.Middleware)(ctx, next);
    if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
      ctx.body = errorBody(ctx.status, reasonOfStatus(ctx.status), ctx.status === 405 ? 'method not allowed on this path' : 'method not implemented');
    }
  };
}
