import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Services } from '../../context.js';
import { notFound } from '../../errors.js';
import { parseInput } from '../auth/names.js';
import type { Principal } from '../auth/principal.js';
import { eventTypes, type EventType } from '../events/event-types.js';
import { resolveAllowed } from './addresses.js';

export const webhookStates = ['active', 'failing'] as const;
export type WebhookState = (typeof webhookStates)[number];

/** A registered webhook as administrators see it: never its secret. */
export interface WebhookRecord {
  id: string;
  url: string;
  events: EventType[];
  /** the repository whose events it gets (null: every repository's, and those of none, such as logins) */
  repository: string | null;
  state: WebhookState;
  /** why the last delivery attempt failed (kept after a re-enable until a delivery succeeds) */
  lastError: string | null;
  /** since when it is failing (null: active) */
  failingSince: Date | null;
  createdAt: Date;
  createdBy: string;
}

const registration = z.object({
  url: z
    .string()
    .max(2048)
    .url()
    .refine((url) => !URL.canParse(url) || /^https?:$/.test(new URL(url).protocol), 'must be an http or https URL')
    .refine((url) => !URL.canParse(url) || (!new URL(url).username && !new URL(url).password), 'must not hold a user name or password'),
  events: z
    .array(z.enum(eventTypes as [EventType, ...EventType[]]))
    .min(1)
    .transform((events) => [...new Set(events)]),
  repository: z.string().min(1).nullish(),
  secret: z.string().min(16, 'at least 16 characters').max(256),
});
export type WebhookRegistration = z.input<typeof registration>;
const byId = z.object({ id: z.string().min(1) });

const columns = `id, url, events, repository, state, last_error as "lastError", failing_since as "failingSince", created_at as "createdAt", created_by as "createdBy"`;
type Row = Omit<WebhookRecord, 'failingSince' | 'createdAt'> & { failingSince: Date | string | null; createdAt: Date | string };
const toRecord = (row: Row): WebhookRecord => ({ ...row, failingSince: row.failingSince === null ? null : new Date(row.failingSince), createdAt: new Date(row.createdAt) });
const webhookNotFound = (id: string) => notFound(`webhook '${id}' not found`);

/**
 * POST A/webhook: delivers from now on the committed events of the listed types (of the repository
 * when named) to `url`, signed with `secret`. The URL's host must resolve to addresses where webhooks
 * may go (docs/events.md "Address rules"): else a 400 that names the address.
 */
export async function registerWebhook(em: EntityManager, services: Services, actor: Principal, input: WebhookRegistration): Promise<WebhookRecord> {
  const { url, events, repository, secret } = parseInput(registration, input);
  const repositoryName = repository ? (await services.repositories.find({ em }, repository)).name : null;
  await resolveAllowed(new URL(url), services.config.WEBHOOK_ALLOW_PRIVATE);
  const [row] = await em.execute<Row[]>(
    `insert into webhook (id, url, events, repository, secret, created_by) values (?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, ?, ?) returning ${columns}`,
    [randomUUID(), url, JSON.stringify(events), repositoryName, secret, actor.userName],
  );
  return toRecord(row!);
}

/** GET A/webhooks: every webhook, oldest first. */
export async function listWebhooks(em: EntityManager): Promise<WebhookRecord[]> {
  return (await em.execute<Row[]>(`select ${columns} from webhook order by created_at, id`)).map(toRecord);
}

/** DELETE A/webhook?id=: no more deliveries, those queued dropped. */
export async function deleteWebhook(em: EntityManager, input: { id: string }): Promise<void> {
  const { id } = parseInput(byId, input);
  const [row] = await em.execute<{ id: string }[]>(`delete from webhook where id = ? returning id`, [id]);
  if (!row) throw webhookNotFound(id);
}

/**
 * POST A/webhook/enable?id=: a failing webhook is active again: it gets new events, and the deliveries
 * it had queued are tried again at once, with a fresh retry period (for an active one too).
 */
export async function enableWebhook(em: EntityManager, input: { id: string }): Promise<WebhookRecord> {
  const { id } = parseInput(byId, input);
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<Row[]>(`update webhook set state = 'active', failing_since = null where id = ? returning ${columns}`, [id]);
    if (!row) throw webhookNotFound(id);
    await tx.execute(`update webhook_delivery set first_failure_at = null, next_attempt_at = now() where webhook_id = ?`, [id]);
    return toRecord(row);
  });
}
