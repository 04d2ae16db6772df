import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { koaMiddleware } from '@as-integrations/koa';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import Koa from 'koa';
import type { Logger } from 'pino';
import { clientAddressHeader } from '../context.js';
import { BodyTooLargeError, InvalidUtf8Error, readBoundedText } from '../http/body.js';
import { attachGraphqlWs } from './websockets.js';

export interface SubgraphServerOptions {
  /** the subgraph schema (buildSubgraphSchema) */
  schema: GraphQLSchema;
  /** builds the resolvers' context from the request headers (authorization, x-request-id, x-client-address) */
  createContext: (headers: Headers) => Promise<object> | object;
  /** the GraphQL path, e.g. '/graphql' */
  path: string;
  /** largest accepted JSON body in bytes (default 1 MiB) */
  maxBodyBytes?: number;
  /** where unexpected resolver errors are logged (they reach clients as an opaque INTERNAL_SERVER_ERROR) */
  logger?: Logger;
}

export interface SubgraphServer {
  /** Koa middleware answering GraphQL over HTTP on `path` (other paths fall through to `next`) */
  middleware: Koa.Middleware;
  /** serves the subgraph's subscriptions over graphql-ws on `path` (connection_init payload → headers) */
  attachWebSockets(server: Server): void;
  stop(): Promise<void>;
}

/**
 * One subgraph behind Apollo Server 5 (split mode, ROLE=content|admin|health): queries and mutations
 * over HTTP via @as-integrations/koa; subscriptions over graphql-ws on the same path, which is where
 * the gateway's split-mode transport subscribes. No landing page (it would load from a CDN) and never a
 * stack trace in a response.
 *
 * The client address header is trusted here: in split mode only the gateway calls subgraphs.
 */
export async function createSubgraphServer(options: SubgraphServerOptions): Promise<SubgraphServer> {
  const { schema, createContext, path } = options;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const apollo = new ApolloServer({
    schema,
    includeStacktraceInErrorResponses: false,
    plugins: [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginInlineTraceDisabled()],
    // errors thrown as GraphQLErrors keep message and extensions; anything else is masked (and logged)
    formatError: (formatted, error) => {
      const original = unwrapResolverError(error);
      if (original instanceof Error && !(original instanceof GraphQLError)) {
        options.logger?.error({ err: original, path: formatted.path }, 'unexpected error in a subgraph resolver');
        return { message: 'Unexpected error.', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR', reasonCode: 'internal', status: 500 } };
      }
      return formatted;
    },
  });
  await apollo.start();

  const graphql = koaMiddleware(apollo, {
    context: async ({ ctx }) => createContext(toHeaders(ctx.req.headers)),
  });

  const middleware: Koa.Middleware = async (ctx, next) => {
    if (ctx.path !== path) return next();
    if (ctx.method === 'POST') {
      const body = await readJson(ctx.req, maxBodyBytes);
      if ('status' in body) {
        ctx.status = body.status;
        ctx.type = 'application/json';
        ctx.body = JSON.stringify({ errors: [{ message: body.error }] });
        return;
      }
      (ctx.request as unknown as { body: unknown }).body = body.value;
    }
    await graphql(ctx as never, async () => {});
  };

  const detachers: (() => Promise<void>)[] = [];

  return {
    middleware,
    attachWebSockets(server) {
      detachers.push(
        attachGraphqlWs(server, path, {
          schema,
          context: async (ctx) => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(ctx.connectionParams ?? {})) {
              if (typeof value === 'string') headers.set(name.toLowerCase(), value);
            }
            return createContext(headers) as Promise<Record<string, unknown>>;
          },
        }),
      );
    },
    async stop() {
      for (const detach of detachers.splice(0)) await detach();
      await apollo.stop();
    },
  };
}

export interface StartedSubgraphServer {
  server: Server;
  /** e.g. http://127.0.0.1:4001/graphql */
  url: string;
  stop(): Promise<void>;
}

/** Starts a Koa app serving one subgraph (HTTP + graphql-ws) on host:port (port 0: a free one). */
export async function startSubgraphServer(
  options: SubgraphServerOptions & { port?: number; host?: string },
): Promise<StartedSubgraphServer> {
  const subgraph = await createSubgraphServer(options);
  const app = new Koa();
  app.use(subgraph.middleware);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  subgraph.attachWebSockets(server);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${options.path}`,
    async stop() {
      await subgraph.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function toHeaders(raw: IncomingMessage['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  if (!headers.has(clientAddressHeader)) headers.set(clientAddressHeader, 'unknown');
  return headers;
}

async function readJson(
  req: IncomingMessage,
  limit: number,
): Promise<{ value: unknown; error?: undefined } | { error: string; status: number }> {
  let text: string;
  try {
    text = await readBoundedText(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { error: 'request body too large', status: 413 };
    if (error instanceof InvalidUtf8Error) return { error: error.message, status: 400 };
    throw error;
  }
  if (text === '') return { value: {} };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: 'request body is not valid JSON', status: 400 };
  }
}
