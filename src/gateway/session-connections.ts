import { bearerToken } from '../context.js';
import { sessionTokenHash } from '../modules/auth/index.js';

/** A session's key in memory: the hash of its bearer token; none without one. */
export function sessionKeyOf(authorization: string | undefined): string | undefined {
  const token = bearerToken(authorization);
  return token ? sessionTokenHash(token) : undefined;
}

/**
 * The open subscription connections (graphql-ws sockets, SSE responses) by the session they were
 * opened with, so that the end of a session closes them: logout or user deletion (announced by
 * `pg_notify('session_ended', <token hash>)`, heard by every process through src/db/notifications.ts) and expiry (each
 * connection's session is verified again every `reverifyMs`).
 */
export class SessionConnections {
  readonly #byHash = new Map<string, Map<object, { authorization: string; close: () => void }>>();
  readonly #timer: NodeJS.Timeout;

  constructor(verify: (authorization: string) => Promise<boolean>, reverifyMs: number) {
    // a sweep still going (many sessions, a slow database) is not joined by another one
    let sweeping = false;
    this.#timer = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      void this.#reverify(verify).finally(() => (sweeping = false));
    }, reverifyMs).unref();
  }

  /** Tracks a connection opened with `Authorization: <authorization>`; answers its untrack function. */
  track(authorization: string | undefined, close: () => void): () => void {
    const hash = sessionKeyOf(authorization);
    if (!authorization || !hash) return () => undefined;
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
