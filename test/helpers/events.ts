import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent, type EventInput } from '../../src/modules/events/index.js';
import type { OpenSubscription, TestService } from './service.js';

/** Events written to the outbox of `service`'s database in one transaction (as a verb would), in the default repository unless they name one. */
export async function commitEvents(service: Pick<TestService, 'services'>, events: Omit<EventInput, 'actor'>[]): Promise<void> {
  const em = service.services.orm.em.fork() as EntityManager;
  const [repository] = await em.execute<{ id: string; name: string }[]>(`select id, name from repository where name = ?`, [service.services.config.DEFAULT_REPOSITORY]);
  await em.transactional(async (tx) => {
    for (const event of events) await recordEvent(tx, { repository, actor: 'test', ...event });
  });
}

/**
 * Commits an event of `probeEntryId` (which the subscriber may read) until the subscription delivers
 * one: from then on it is live. No fixed sleep: how long a subscription takes to start through the
 * gateway varies on a loaded machine.
 */
export async function untilLive(service: Pick<TestService, 'services'>, subscription: OpenSubscription<unknown>, probeEntryId: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    await commitEvents(service, [{ type: 'ENTRY_UPDATED', entryId: probeEntryId, details: { probe: true } }]);
    if (!(await subscription.until(1, 200).then(() => true, () => false))) continue;
    if (subscription.events.length === 0) throw new Error(`the subscription ended: ${JSON.stringify(subscription.outcome())}`);
    return;
  }
  throw new Error('the subscription delivered no probe event within 20 s');
}
