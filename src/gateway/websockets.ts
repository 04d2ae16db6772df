import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ConnectionInitMessage, ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { GraphQLError } from 'graphql';
import { WebSocketServer } from 'ws';
import { maxOperationBytes } from './limits.js';

/** The error of an operation refused because too many are under way (on a connection, for a session or an address). */
export const tooManyOperations = (message: string) =>
  new GraphQLError(message, { extensions: { code: 'TOO_MANY_OPERATIONS', reasonCode: 'tooManyRequests', status: 429 } });

/**
 * graphql-ws on `path` of `server`; upgrades to other paths are left to other handlers. Answers the
 * function that detaches it: stops taking upgrades, then closes the open sockets.
 *
 * `maxOperations`: how many operations one connection may have under way; beyond, a subscribe is
 * answered with an error and the others go on (one client socket took 500 subscriptions that each
 * polled every 100 ms). For clients' connections: the gateway's own connections to a subgraph (split
 * mode) may carry many clients' subscriptions.
 */
export function attachGraphqlWs<P extends ConnectionInitMessage['payload'], E extends Record<PropertyKey, unknown>>(
  server: Server,
  path: string,
  options: ServerOptions<P, Extra & Partial<E>>,
  maxOperations = Infinity,
): () => Promise<void> {
  // a message is one operation: as large as a GraphQL POST may be (ws' default took 100 MiB)
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxOperationBytes });
  const bounded: ServerOptions<P, Extra & Partial<E>> = {
    ...options,
    onSubscribe: (ctx, id, payload) => {
      // graphql-ws has already entered this one in `subscriptions`
      if (Object.keys(ctx.subscriptions).length > maxOperations) {
        return [tooManyOperations(`A connection may have at most ${maxOperations} operations under way: complete one first, or open another connection.`)];
      }
      return options.onSubscribe?.(ctx, id, payload);
    },
    // yoga's `extensions.http` (the status an HTTP answer would carry) is internal: HTTP answers drop it, and so does this
    onNext: async (ctx, id, payload, args, result) => {
      const shown = (await options.onNext?.(ctx, id, payload, args, result)) ?? result;
      if (!shown.errors?.some((error) => error.extensions?.['http'] !== undefined)) return shown;
      return {
        ...shown,
        errors: shown.errors.map((error) => {
          const { http: _http, ...extensions } = error.extensions ?? {};
          return { ...(error instanceof GraphQLError ? error.toJSON() : error), extensions };
        }),
      };
    },
  };
  const disposer = useServer<P, E>(bounded, wss);
  const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) return;
    wss.handleUpgrade(req, socket, head, (ws) => {
      wss.emit('connection', ws, req);
      // graphql-ws writes every socket error with its stack to the console. A client's protocol fault
      // (ws' WS_ERR_* codes: a message over maxPayload, a bad frame) is the client's, and ws has closed
      // that socket with the code that says why (1009, 1002): it is no internal error to report.
      const reporters = ws.listeners('error') as ((error: Error) => void)[];
      ws.removeAllListeners('error');
      ws.once('error', (error: Error & { code?: string }) => {
        if (!error.code?.startsWith('WS_ERR_')) for (const report of reporters) report.call(ws, error);
      });
    });
  };
  server.on('upgrade', listener);
  return async () => {
    server.off('upgrade', listener);
    await disposer.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}
