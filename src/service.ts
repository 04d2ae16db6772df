import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import type { GraphQLSchema } from 'graphql';
import { ConfigError, type Config } from './config.js';
import { createRequestContext, type Services } from './context.js';
import { openDatabase, type Database } from './db/database.js';
import { SnapshotReaders } from './db/snapshot-readers.js';
import { createGateway, type Gateway, type QueryLimits } from './gateway/gateway.js';
import { chargeListItems } from './graphql/result-budget.js';
import { createSubgraphServer } from './gateway/subgraph-server.js';
import { answerClientErrors, answerUnknownExpectations, continueUnlessLargerThan, maxRequestHeadBytes } from './http/client-errors.js';
import { trackUnanswered } from './http/unanswered.js';
import { createHttpApp } from './http/app.js';
import type { Logger } from './logger.js';
import { createAuthServices } from './modules/auth/index.js';
import { entities } from './modules/entities.js';
import { listenForNotifications } from './db/notifications.js';
import { ensureAdministrator, forgetChangedMemberships, forgetEndedSession, membershipsChangedChannel, sessionEndedChannel } from './modules/auth/index.js';
import { maxLimit } from './modules/search/index.js';
import { deepCheckGraceMs } from './modules/health/index.js';
import { ensureDefaultRepository, repositoryChangedChannel } from './modules/repositories/index.js';
import { RepositoryCache } from './modules/repositories/index.js';
import { AclCache } from './modules/access/index.js';
import { transferRouter } from './http/transfer.js';
import { maxUploadBodyBytes, sweepPendingUploads, uploadLifetimeMs } from './modules/entries/index.js';
import { migrationUnderWay } from './storage/migrate.js';
import { closeStores, openStores, type Stores } from './storage/stores.js';
import { JobQueue } from './modules/jobs/index.js';
import { LiveEvents } from './modules/events/index.js';
import { addRepresentationDownload } from './http/representation-download.js';
import { buildSubgraphs, composeSupergraph, type SubgraphName } from './subgraphs/index.js';

export interface RunningService {
  /** `http://host:port` + BASE_PATH: the spec's `{base_url}` */
  baseUrl: string;
  server: http.Server;
  services: Services;
  stop(): Promise<void>;
}

/**
 * What the composition (app/service.ts) plugs in, so that src/ knows neither the REST layer nor the
 * workers: routers served beside the gateway, and the background jobs of ROLE=all|worker.
 */
export interface ServiceParts {
  gatewayRouters?: (parts: { gateway: Gateway; services: Services; schemas: readonly GraphQLSchema[] }) => Router[];
  workers?: (services: Services) => { stop(): Promise<void> }[];
}

/**
 * The bounds of a GraphQL operation (docs/security.md). Entry lists are sized by `options.limit`
 * (default 100, at most 1000), job lists by `limit`. At most 100 000 by cost: one level of 1000 entries
 * with their parent, resource and predecessor costs ≈ 9 000 (a REST page of 100 folders with their
 * children ≈ 91 000); lists nested in lists of 1000 are refused. At most 10 aliases: with 30, 30 pages
 * of 1000 entries passed as one operation (28 MB and 2.6 s of serialising each; 8 at once held
 * /readyz for 10 s).
 */
export const graphqlLimits: QueryLimits = {
  maxDepth: 12,
  maxAliases: 10,
  maxCost: 100_000,
  slicedLists: [
    { argument: 'options', inputField: 'limit', sizedField: 'entries', defaultSize: 100, maxSize: maxLimit },
    { argument: 'limit', sizedField: 'entries', defaultSize: 100, maxSize: maxLimit },
  ],
};

/**
 * Starts the parts of the service that `ROLE` names (all of them by default) on one HTTP server:
 * database, storage, the first administrator and repository, the gateway over the three subgraphs (in
 * process, or over HTTP in split mode), the REST layer and the operational endpoints.
 */
export async function startService(config: Config, logger: Logger, parts: ServiceParts = {}): Promise<RunningService> {
  const database = await openDatabase(config, logger, entities);
  let stores: Stores | undefined;
  try {
    stores = await openStores(config, () => migrationUnderWay(database.orm.em.fork(), config.storageBackend));
    return await startOnStores(config, logger, parts, database, stores);
  } catch (error) {
    // their scratch folders would outlive a test's failed start
    if (stores) await closeStores(stores).catch((closeError: unknown) => logger.error({ err: closeError }, 'closing the stores after a failed start'));
    // an embedded Postgres would outlive the process whose start failed (a port taken, say)
    await database.close().catch((closeError: unknown) => logger.error({ err: closeError }, 'closing the database after a failed start'));
    throw error;
  }
}

async function startOnStores(config: Config, logger: Logger, parts: ServiceParts, database: Database, stores: Stores): Promise<RunningService> {
  const { contentStore, cacheStore } = stores;
  const jobs = new JobQueue(config, database.orm, logger, database.url);
  const services: Services = {
    config,
    logger,
    orm: database.orm,
    contentStore,
    cacheStore,
    auth: createAuthServices(database.url, logger),
    snapshotReaders: new SnapshotReaders(database.url, logger),
    jobs,
    repositories: new RepositoryCache(),
    acls: new AclCache(),
    liveEvents: new LiveEvents(database.orm, logger),
  };
  const em = database.orm.em.fork();
  // Uploads cut off by a crash: alone, this process owns every one of them; beside others (split
  // mode, or a bucket that processes on other machines use) only old ones are surely abandoned.
  const abandonedAfterMs = config.ROLE === 'all' && config.storageBackend === 'fs' ? 0 : uploadLifetimeMs;
  await Promise.all([contentStore.sweepTemporary({ olderThanMs: abandonedAfterMs }), cacheStore.sweepTemporary({ olderThanMs: abandonedAfterMs })]);
  await sweepPendingUploads(em, services, abandonedAfterMs);
  const workers = config.ROLE === 'all' || config.ROLE === 'worker' ? (parts.workers?.(services) ?? []) : [];
  // a process that submits jobs starts the queue too: only a started queue announces new jobs (NOTIFY);
  // health submits the deep check's jobs, the gateway those of REST's create (its text, its thumbnail)
  const usesJobs = config.ROLE !== 'admin';
  if (usesJobs) await jobs.start();

  await ensureAdministrator(em, services);
  await ensureDefaultRepository(em, config, config.DEFAULT_REPOSITORY, config.ADMIN_USER);

  const subgraphs = await buildSubgraphs();
  for (const subgraph of Object.values(subgraphs)) chargeListItems(subgraph.schema, config.GRAPHQL_MAX_RESULT_ITEMS);
  const createContext = (headers: Headers) => createRequestContext(services, headers);
  const graphqlPath = `${config.BASE_PATH}/graphql`;
  const servesSubgraph = (['content', 'admin', 'health'] as const).find((name) => name === config.ROLE);

  let gateway: Gateway | undefined;
  const subgraphServer = servesSubgraph
    ? await createSubgraphServer({ schema: subgraphs[servesSubgraph].schema, createContext, path: graphqlPath })
    : undefined;
  if (config.ROLE === 'all' || config.ROLE === 'gateway') {
    const split = config.ROLE === 'gateway';
    const urls: Partial<Record<SubgraphName, string>> = split
      ? { content: config.SUBGRAPH_CONTENT_URL, admin: config.SUBGRAPH_ADMIN_URL, health: config.SUBGRAPH_HEALTH_URL }
      : {};
    if (split && Object.values(urls).filter(Boolean).length < 3) {
      throw new ConfigError('ROLE=gateway needs SUBGRAPH_CONTENT_URL, SUBGRAPH_ADMIN_URL and SUBGRAPH_HEALTH_URL');
    }
    gateway = createGateway({
      supergraphSdl: composeSupergraph(subgraphs, urls),
      subgraphs: split
        ? undefined
        : (Object.keys(subgraphs) as SubgraphName[]).map((name) => ({ name, schema: subgraphs[name].schema, createContext })),
      graphqlEndpoint: graphqlPath,
      limits: graphqlLimits,
      corsOrigins: config.CORS_ORIGINS,
      introspection: config.GRAPHQL_INTROSPECTION,
      httpFastPath: config.GATEWAY_HTTP_FAST_PATH,
      singleSubgraphShortcut: config.GATEWAY_SINGLE_SUBGRAPH_SHORTCUT,
      reverifySessionsMs: config.SUBSCRIPTION_SESSION_CHECK_SECONDS * 1000,
      subscriptionBounds: {
        socketsPerSession: config.SUBSCRIPTION_MAX_SOCKETS_PER_SESSION,
        socketsPerAddress: config.SUBSCRIPTION_MAX_SOCKETS_PER_ADDRESS,
        operationsPerSession: config.SUBSCRIPTION_MAX_OPERATIONS_PER_SESSION,
        operationsPerAddress: config.SUBSCRIPTION_MAX_OPERATIONS_PER_ADDRESS,
      },
      // split mode: a synchronous deep check answers within its deadline and the clean-up's grace (docs/administration.md)
      upstreamTimeoutsMs: { health: Math.max(30_000, config.DEEP_CHECK_TIMEOUT_MS + deepCheckGraceMs) },
      logger,
      verifyConnection: async (authorization) => {
        const context = createRequestContext(services, new Headers(authorization ? { authorization } : {}));
        return context.principal().then(() => true, () => false);
      },
    });
    await gateway.ready();
  }
  // what other processes announce: the end of a session (logout, user deleted), a membership change, a repository changed, an event committed
  const endedGateway = gateway;
  const stopListening = await listenForNotifications(
    database.url,
    [
      {
        channel: sessionEndedChannel,
        notified: (tokenHash) => {
          forgetEndedSession(services, tokenHash);
          endedGateway?.endSession(tokenHash);
        },
        missedSome: () => services.auth.sessions.clear(),
      },
      // a user's group memberships changed: their sessions read their groups again (the sessions were cleared above when some were missed)
      { channel: membershipsChangedChannel, notified: (userName) => forgetChangedMemberships(services, userName) },
      { channel: repositoryChangedChannel, notified: (name) => services.repositories.forget(name), missedSome: () => services.repositories.forgetAll() },
      // committed events, for the contentEvents subscribers of this process (those of the content subgraph)
      ...(config.ROLE === 'all' || config.ROLE === 'content' ? [services.liveEvents.listener] : []),
    ],
    logger,
  );

  const app = createHttpApp({
    services,
    gateway,
    subgraphMiddleware: subgraphServer?.middleware,
    // binary transfer (shared by both APIs) first, then what the composition adds
    routers: gateway
      ? [addRepresentationDownload(transferRouter(services), services), ...(parts.gatewayRouters?.({ gateway, services, schemas: Object.values(subgraphs).map((s) => s.schema) }) ?? [])]
      : [],
  });
  // a request without Host gets the error body from useHostHeader, not Node's empty 400
  const server = http.createServer({ maxHeaderSize: maxRequestHeadBytes, requireHostHeader: false }, app.callback());
  // uploads of large files take long: no request timeout, but idle sockets are closed
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server);
  answerUnknownExpectations(server);
  const unanswered = trackUnanswered(server);
  continueUnlessLargerThan(server, (request) => maxUploadBodyBytes(config, /^multipart\//i.test(request.headers['content-type'] ?? '')));
  gateway?.attachWebSockets(server);
  subgraphServer?.attachWebSockets(server);
  server.listen(config.PORT, config.HOST);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}${config.BASE_PATH}`;
  logger.info({ baseUrl, role: config.ROLE }, 'service listening');

  let stopping: Promise<void> | undefined;
  // A step of the shutdown that does not end is named in the log (it would otherwise hang without a
  // word). A step that fails is logged and the next ones still run, so the database is closed in any
  // case; stop then rejects with the failures.
  const failures: unknown[] = [];
  const step = async (name: string, work: () => Promise<unknown> | undefined) => {
    const slow = setTimeout(() => logger.warn({ step: name }, 'stopping the service: this step takes more than 15 s'), 15_000).unref();
    try {
      await work();
    } catch (error) {
      logger.error({ err: error, step: name }, 'stopping the service: this step failed');
      failures.push(error);
    } finally {
      clearTimeout(slow);
    }
  };
  const stop = () =>
    (stopping ??= (async () => {
      await step('workers', () => Promise.all(workers.map((worker) => worker.stop())));
      await step('job queue', () => jobs.stop());
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // in-flight requests get SHUTDOWN_DRAIN_MS to finish; then the unanswered ones are told to come
      // again, and a moment later (for those answers to leave) every connection left is cut
      let cut: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        const answered = unanswered.answerWithUnavailable(5);
        if (answered > 0) logger.warn({ answered }, 'stopping the service: requests unfinished after the drain were answered 503');
        cut = setTimeout(() => server.closeAllConnections(), answered > 0 ? 1_000 : 0);
      }, config.SHUTDOWN_DRAIN_MS);
      await step('notification listener', () => stopListening());
      await step('gateway', () => gateway?.dispose());
      await step('subgraph server', () => subgraphServer?.stop());
      await step('HTTP connections', () => closed);
      clearTimeout(timer);
      clearTimeout(cut);
      await step('sessions', () => services.auth.close());
      await step('snapshot readers', () => services.snapshotReaders.close());
      await step('stores', () => closeStores(stores));
      await step('database', () => database.close());
      if (failures.length > 0) throw new AggregateError(failures, `the service stopped with ${failures.length} failed step(s)`);
      logger.info('service stopped');
    })());
  return { baseUrl, server, services, stop };
}

