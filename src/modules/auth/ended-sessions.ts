import pg from 'pg';
import type { Logger } from '../../logger.js';
import { sessionEndedChannel } from './operations.js';

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
