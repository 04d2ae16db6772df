import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Services } from '../../context.js';
import { ServiceError } from '../../errors.js';
import { readEvent, type OutboxEvent } from '../events/outbox.js';
import { pinnedLookup, resolveAllowed } from './addresses.js';

/** The settings a delivery follows (docs/events.md "Retry schedule"). */
type DeliverySettings = Pick<
  Config,
  'WEBHOOK_ALLOW_PRIVATE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_RETRY_FOR_MS' | 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_RETRY_MAX_MS' | 'WEBHOOK_CONCURRENCY'
>;

/** `sha256=<hex HMAC-SHA256 of the body>`, the X-Signature-256 header. */
export const signatureOf = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The JSON body of a delivery: the event as the outbox holds it. */
export const deliveryBody = (event: OutboxEvent) => JSON.stringify(event);

/**
 * Sends one event to a webhook URL: resolves and checks its host (again: it may resolve elsewhere since
 * registration), connects to the checked address only, and answers whether a 2xx came within the
 * timeout, else why not. Redirects are not followed: a 3xx is a failure.
 */
export async function sendEvent(settings: DeliverySettings, target: { url: string; secret: string }, event: OutboxEvent): Promise<{ error?: string }> {
  const url = new URL(target.url);
  let addresses;
  try {
    addresses = await resolveAllowed(url, settings.WEBHOOK_ALLOW_PRIVATE);
  } catch (error) {
    return { error: error instanceof ServiceError ? error.message : String(error) };
  }
  const body = deliveryBody(event);
  const request = (url.protocol === 'https:' ? https : http).request;
  return new Promise((resolve) => {
    const outgoing = request(url, {
      method: 'POST',
      lookup: pinnedLookup(addresses),
      signal: AbortSignal.timeout(settings.WEBHOOK_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'content-repository-service webhooks',
        'x-event-id': event.id,
        'x-event-type': event.type,
        'x-signature-256': signatureOf(target.secret, body),
      },
    });
    outgoing.on('response', (response) => {
      // the answer's body is not read: the status decides
      response.resume();
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) resolve({});
      else if (status >= 300 && status < 400) resolve({ error: `answered ${status} (redirects are not followed) to ${response.headers.location ?? 'no location'}` });
      else resolve({ error: `answered ${status}` });
      outgoing.destroy();
    });
    outgoing.on('error', (error) =>
      resolve({ error: error.name === 'TimeoutError' || error.name === 'AbortError' ? `no answer within ${settings.WEBHOOK_TIMEOUT_MS} ms` : error.message }),
    );
    outgoing.end(body);
  });
}

/** The delay before retry number `attempt` (1: the first retry): doubled each time from the base, capped, with up to half of it taken off at random (jitter). */
export function retryDelayMs(settings: DeliverySettings, attempt: number): number {
  const full = Math.min(settings.WEBHOOK_RETRY_MAX_MS, settings.WEBHOOK_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 30));
  return Math.round(full / 2 + Math.random() * (full / 2));
}

interface DueDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  url: string;
  secret: string;
  attempts: number;
}

/**
 * Takes up to `limit` due deliveries under a lease long enough for an attempt: a row is due when its
 * time has come, its webhook is active, no live lease holds it (a worker killed mid-delivery leaves one
 * that runs out) and no earlier row of its webhook and entry is queued (in order per entry).
 */
async function takeDue(em: EntityManager, limit: number, leaseMs: number): Promise<DueDelivery[]> {
  return em.execute<DueDelivery[]>(
    `with due as (
       select d.id from webhook_delivery d join webhook w on w.id = d.webhook_id
        where w.state = 'active' and d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until < now())
          and not exists (select 1 from webhook_delivery earlier
                           where earlier.webhook_id = d.webhook_id and earlier.ordering_key = d.ordering_key and earlier.id < d.id)
        order by d.id limit ? for update of d skip locked)
     update webhook_delivery d set leased_until = now() + make_interval(secs => ?), attempts = d.attempts + 1
       from due, webhook w
      where d.id = due.id and w.id = d.webhook_id
     returning d.id::text as id, d.webhook_id as "webhookId", d.event_id::text as "eventId", w.url, w.secret, d.attempts`,
    [limit, leaseMs / 1000],
  );
}

/**
 * What became of one attempt: a delivery is done (its row goes); a failure waits for its retry, or —
 * its first failure WEBHOOK_RETRY_FOR_MS ago — marks the webhook failing with the error (its queued
 * rows stay for a re-enable).
 */
async function recordOutcome(em: EntityManager, settings: DeliverySettings, delivery: DueDelivery, error: string | undefined): Promise<'delivered' | 'retry' | 'failing'> {
  if (!error) {
    await em.execute(`delete from webhook_delivery where id = ?`, [delivery.id]);
    await em.execute(`update webhook set last_error = null where id = ? and last_error is not null`, [delivery.webhookId]);
    return 'delivered';
  }
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<{ expired: boolean }[]>(
      `update webhook_delivery
          set first_failure_at = coalesce(first_failure_at, now()), last_error = ?, leased_until = null,
              next_attempt_at = now() + make_interval(secs => ?)
        where id = ?
      returning first_failure_at <= now() - make_interval(secs => ?) as expired`,
      [error, retryDelayMs(settings, delivery.attempts) / 1000, delivery.id, settings.WEBHOOK_RETRY_FOR_MS / 1000],
    );
    await tx.execute(`update webhook set last_error = ? where id = ?`, [error, delivery.webhookId]);
    if (!row?.expired) return 'retry';
    await tx.execute(`update webhook set state = 'failing', failing_since = now() where id = ? and state = 'active'`, [delivery.webhookId]);
    return 'failing';
  });
}

/**
 * One round of a worker's delivery loop: takes what is due (up to WEBHOOK_CONCURRENCY rows), sends them
 * at once and records each outcome. Answers how many it took.
 */
export async function deliverDue(services: Pick<Services, 'config' | 'orm' | 'logger'>): Promise<number> {
  const settings = services.config;
  const em = services.orm.em.fork();
  // an attempt ends within the timeout; the lease outlasts it, so no other worker takes a row still in flight
  const leaseMs = 2 * settings.WEBHOOK_TIMEOUT_MS + 1_000;
  const due = await takeDue(em, settings.WEBHOOK_CONCURRENCY, leaseMs);
  await Promise.all(
    due.map(async (delivery) => {
      const event = await readEvent(em, delivery.eventId);
      // an event removed by retention meanwhile has nothing left to deliver
      const { error } = event ? await sendEvent(settings, delivery, event) : {};
      const outcome = await recordOutcome(em.fork(), settings, delivery, error);
      if (outcome !== 'delivered') {
        services.logger.warn({ webhookId: delivery.webhookId, eventId: delivery.eventId, attempt: delivery.attempts, error, outcome }, 'a webhook delivery failed');
      }
    }),
  );
  return due.length;
}
