import pg from 'pg';
import type { Logger } from '../logger.js';

/** What a process does with the notifications of one Postgres channel. */
export interface ChannelListener {
  channel: string;
  /** one notification's payload */
  notified(payload: string): void;
  /**
   * The connection was lost and is back: notifications sent meanwhile were missed, so whatever they
   * would have corrected (a cached record) is forgotten wholesale.
   */
  missedSome?(): void;
}

/**
 * LISTENs on the given channels on one connection of its own (a pooled one would be returned to the
 * pool and stop listening) and hands each notification to its channel's listener; reconnects after a
 * lost connection. Every role of the service runs one (src/service.ts). Resolves once listening (or
 * after logging the first failure) to the function that stops.
 */
export async function listenForNotifications(databaseUrl: string, listeners: readonly ChannelListener[], log: Logger): Promise<() => Promise<void>> {
  const byChannel = new Map(listeners.map((listener) => [listener.channel, listener]));
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (reconnecting: boolean) => {
    const current = new pg.Client({ connectionString: databaseUrl });
    client = current;
    current.on('notification', (message) => {
      if (message.payload) byChannel.get(message.channel)?.notified(message.payload);
    });
    // one reconnect per lost connection: a connection that dies during `listen` reports it twice (the
    // client's error event and the failed query), and a second reconnect would leave a listener that
    // stop() never ends, delivering every notification twice
    let lost = false;
    current.on('error', (error) => {
      if (lost) return;
      lost = true;
      log.warn({ err: error, channels: [...byChannel.keys()] }, 'lost the notification listener connection: reconnecting');
      void current.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void connect(true), 1_000);
    });
    try {
      await current.connect();
      // every channel in one statement: one round trip, and the connection shows what it listens to (pg_stat_activity.query)
      await current.query([...byChannel.keys()].map((channel) => `listen ${current.escapeIdentifier(channel)}`).join('; '));
      if (reconnecting) for (const listener of listeners) listener.missedSome?.();
    } catch (error) {
      current.emit('error', error);
    }
  };
  await connect(false);
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
