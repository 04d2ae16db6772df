import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ConnectionInitMessage, ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';

/**
 * graphql-ws on `path` of `server`; upgrades to other paths are left to other handlers. Answers the
 * function that detaches it: stops taking upgrades, then closes the open sockets.
 */
export function attachGraphqlWs<P extends ConnectionInitMessage['payload'], E extends Record<PropertyKey, unknown>>(
  server: Server,
  path: string,
  options: ServerOptions<P, Extra & Partial<E>>,
): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true });
  const disposer = useServer<P, E>(options, wss);
  const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) return;
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', listener);
  return async () => {
    server.off('upgrade', listener);
    await disposer.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}
