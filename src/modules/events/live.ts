import { createPubSub } from '@graphql-yoga/subscription';
import { stoppingWith } from '../../graphql/pubsub.js';
import type { ChannelListener } from '../../db/notifications.js';
import type { Orm } from '../../db/orm.js';
import type { Logger } from '../../logger.js';
import { readEvent, type OutboxEvent } from './outbox.js';

/** Announced by the outbox's insert trigger at commit (Migration20261128020000EventNotifications). */
export const eventCommittedChannel = 'event_committed';

/**
 * This process's relay of committed events to its `contentEvents` subscribers. Every process hears every
 * commit (Postgres NOTIFY), and reads the event only when one of its subscribers watches the
 * repository. Relayed one after the other, in the order of the notifications (the order of commits).
 */
export class LiveEvents {
  readonly #pubSub = createPubSub<Record<string, [OutboxEvent]>>();
  readonly #watched = new Map<string, number>();
  #relaying: Promise<void> = Promise.resolve();

  constructor(
    private readonly orm: Orm,
    private readonly logger: Logger,
  ) {}

  /** What src/service.ts hands to `listenForNotifications`. */
  readonly listener: ChannelListener = {
    channel: eventCommittedChannel,
    notified: (payload) => {
      const { id, repositoryId } = JSON.parse(payload) as { id: string; repositoryId: string | null };
      if (!repositoryId || !this.#watched.has(repositoryId)) return;
      this.#relaying = this.#relaying.then(() => this.#relay(id, repositoryId));
    },
    missedSome: () => this.logger.warn('the event listener lost its connection: live subscribers missed the events committed meanwhile'),
  };

  async #relay(id: string, repositoryId: string): Promise<void> {
    try {
      const event = await readEvent(this.orm.em.fork(), id);
      if (event) this.#pubSub.publish(repositoryId, event);
    } catch (error) {
      this.logger.warn({ err: error, eventId: id }, 'could not read a committed event for its live subscribers');
    }
  }

  /** The events committed in the repository from now on; `return()` on the iterator stops watching. */
  watch(repositoryId: string): AsyncIterableIterator<OutboxEvent> {
    this.#watched.set(repositoryId, (this.#watched.get(repositoryId) ?? 0) + 1);
    const events = this.#pubSub.subscribe(repositoryId);
    let watching = true;
    const unwatch = () => {
      if (!watching) return;
      watching = false;
      const count = (this.#watched.get(repositoryId) ?? 1) - 1;
      if (count > 0) this.#watched.set(repositoryId, count);
      else this.#watched.delete(repositoryId);
    };
    return stoppingWith(events, unwatch);
  }
}
