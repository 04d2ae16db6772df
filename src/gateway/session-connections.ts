import pg from 'pg';
import type { Logger } from 'pino';
import { bearerToken } from '../context.js';
import { sessionEndedChannel, sessionTokenHash } from '../modules/auth/operations.js';

/**
 * The open subscription connections (graphql-ws sockets, SSE responses) by the session they were
 * opened with, so that the end of a session closes them: logout or user deletion (announced by
 * `pg_notify('session_ended', <token hash>)`, heard by every gateway process) and expiry (each
 * connection's session is verified again every `reverifyMs`).
 */
export class SessionConnections {
  readonly #byHash = new Map<string, Map<object, { authorization: string; close: () => void }>>();
  readonly #timer: NodeJS.Timeout;

  constructor(verify: (authorization: string) => Promise<boolean>, reverifyMs: number) {
    this.#timer = setInterval(() => void this.#reverify(verify), reverifyMs).unref();
  }

  /** Tracks a connection opened with `Authorization: <authorization>`; answers its untrack function. */
  track(authorization: string | undefined, close: () => void): () => void {
    const token = bearerToken(authorization);
    if (!authorization || !token) return () => undefined;
    const hash = sessionTokenHash(token);
    let connections = this.#byHash.get(hash);
    if (!connections) this.#byHash.set(hash, (connections = new Map()));
    const key = {};
    connections.set(key, { authorization, close });
    return () => {
      connections.delete(key);
      if (connections.size === 0 && this.#byHash.get(hash) === connections) this.#byHash.delete(hash);
    };
  }

  /** Closes every connection of the session with this token hash. */
  end(tokenHash: string): void {
    const connections = this.#byHash.get(tokenHash);
    this.#byHash.delete(tokenHash);
    for (const { close } of connections?.values() ?? []) close();
  }

  async #reverify(verify: (authorization: string) => Promise<boolean>): Promise<void> {
    for (const [hash, connections] of [...this.#byHash]) {
      const [first] = connections.values();
      if (first && !(await verify(first.authorization).catch(() => true))) this.end(hash);
    }
  }

  dispose(): void {
    clearInterval(this.#timer);
  }
}

/**
 * LISTENs on the `session_ended` channel on a connection of its own (a pooled one would be returned
 * to the pool and stop listening) and calls `onEnded` with each token hash; reconnects after a lost
 * connection. Resolves once listening (or after logging the first failure) to the function that stops.
 */
export async function listenForEndedSessions(databaseUrl: string, onEnded: (tokenHash: string) => void, log: Logger): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const current = new pg.Client({ connectionString: databaseUrl });
    client = current;
    current.on('notification', (message) => {
      if (message.channel === sessionEndedChannel && message.payload) onEnded(message.payload);
    });
    current.on('error', (error) => {
      log.warn({ err: error }, 'lost the session_ended listener connection: reconnecting');
      void current.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void connect(), 1_000);
    });
    try {
      await current.connect();
      await current.query(`listen ${sessionEndedChannel}`);
    } catch (error) {
      current.emit('error', error);
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
