import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { ReadableAcls } from '../access/acl.js';
import { readableAcls, visibleEvents, visibleEventTallies, type AccessScope } from '../access/policy.js';
import { parseInput } from '../auth/names.js';
import type { RepositoryRecord } from '../repositories/operations.js';
import { defaultLimit, maxLimit, type SqlPredicate } from '../search/entry-query.js';
import { administrationEventTypes, eventTypes } from './event-types.js';
import { outboxEventColumns, outboxEventOf, type OutboxEventRow, type OutboxEvent } from './outbox.js';

const identifier = z.string().min(1, 'must not be empty').max(255, 'at most 255 characters');

/** The filters of the audit trail (DESIGN §11), each optional; `from` and `to` bound `at`, both included. */
const auditQuerySchema = z
  .object({
    entryId: identifier.nullish(),
    chronicalId: identifier.nullish(),
    actor: identifier.nullish(),
    type: z.enum(eventTypes, { message: 'not an event type (docs/events.md lists them)' }).nullish(),
    from: z.date().nullish(),
    to: z.date().nullish(),
    limit: z.number().int().min(0, `must be an integer from 0 to ${maxLimit}`).max(maxLimit, `must be an integer from 0 to ${maxLimit}`).nullish(),
    offset: z.number().int().min(0, 'must be a non-negative integer').nullish(),
  })
  .refine((query) => !query.from || !query.to || query.from <= query.to, { message: 'must not be after to', path: ['from'] });
export type AuditQuery = z.input<typeof auditQuerySchema>;

/**
 * Who reads which trail: a repository's (C/audit: the events of that repository) or, without one, the
 * administration domain's (A/audit: repositories, policies, users, groups, logins).
 */
export interface AuditScope extends Omit<AccessScope, 'repository'> {
  repository: RepositoryRecord | null;
}

/**
 * A page of the audit trail, newest first, with `count` of all the events the filters and the caller's
 * visibility (access/policy.ts `visibleEvents`) let through. Each filter is served by an index of the
 * event table led by the repository (Migration20261128050000AuditIndexes), so a page reads only the
 * matching index entries (and, for a caller who is not an administrator, the chronicles it may see, hashed once). A count
 * filtered by type and actor only is a sum of tallies (`talliedCount`); any other reads its events.
 */
export async function auditEvents(scope: AuditScope, input: AuditQuery): Promise<{ count: number; entries: OutboxEvent[] }> {
  const query = parseInput(auditQuerySchema, input);
  const filters: SqlPredicate[] = [
    scope.repository
      ? { sql: 'ev.repository_id = ?', params: [scope.repository.id] }
      : query.type
        ? // one type: whether it is the domain's (a list beside `type = ?` led Postgres to sort every login: 86 ms)
          { sql: administrationEventTypes.includes(query.type) ? 'true' : 'false', params: [] }
        : { sql: 'ev.type = any(?::text[])', params: [`{${administrationEventTypes.join(',')}}`] },
  ];
  const add = (value: unknown, sql: string) => {
    if (value !== undefined && value !== null) filters.push({ sql, params: [value] });
  };
  add(query.entryId, 'ev.entry_id = ?');
  add(query.chronicalId, 'ev.chronical_id = ?');
  add(query.actor, 'ev.actor = ?');
  add(query.type, 'ev.type = ?');
  add(query.from, 'ev.at >= ?');
  // `at` holds microseconds, a REST date milliseconds: `to` takes in its whole millisecond
  add(query.to && new Date(query.to.getTime() + 1), 'ev.at < ?');
  const readable = scope.repository ? await readableAcls({ ...scope, repository: scope.repository }) : undefined;
  const visible = visibleEvents(scope.principal, scope.repository ? { repositoryId: scope.repository.id, readable } : 'administration');
  const { sql: where, params } = conjunction(visible ? [...filters, visible] : filters);
  const em: EntityManager = scope.em;
  const count = talliedCount(scope, query, filters, readable) ?? { sql: `select count(*)::int as count from event ev where ${where}`, params };
  const page = (order: string) =>
    em.execute<OutboxEventRow[]>(`select ${outboxEventColumns} from event ev where ${where} order by ${order} limit ? offset ?`, [
      ...params,
      query.limit ?? defaultLimit,
      query.offset ?? 0,
    ]);
  const dated = Boolean(query.from || query.to);
  if (dated || (visible && (query.actor || query.type))) {
    // The count first, where it decides the page. Postgres walks the id index back from the newest event
    // to a range (67 ms for an hour a day old of 200,000 events): a range known to be small is read by
    // the time index and sorted (`+ 0`: not by the id index). And a page of a user's that holds nothing
    // is not read: by an actor or a type of whose events it sees none, it would read every one of them
    // to find none (19,750 events, 58 ms p50 of a million at load 3–14).
    const [counted] = await em.execute<{ count: number }[]>(count.sql, count.params);
    if (counted!.count <= (query.offset ?? 0) || query.limit === 0) return { count: counted!.count, entries: [] };
    const rows = await page(dated && counted!.count <= sortedRangeLimit ? 'ev.id + 0 desc' : 'ev.id desc');
    return { count: counted!.count, entries: rows.map(outboxEventOf) };
  }
  const [rows, [counted]] = await Promise.all([page('ev.id desc'), em.execute<{ count: number }[]>(count.sql, count.params)]);
  return { count: counted!.count, entries: rows.map(outboxEventOf) };
}

/** Up to how many events a time range's page sorts (more: the id index, newest first, reads the fewer rows). */
const sortedRangeLimit = 20_000;

const conjunction = (predicates: SqlPredicate[]) => ({ sql: predicates.map((p) => p.sql).join(' and '), params: predicates.flatMap((p) => p.params) });

/**
 * The count of a page filtered by type and actor only, from event_tally (Migration20261128150000EventTallies):
 * the sum of the rows of the trail's key and of its pending rows (Migration20261207180000EventTallyPending) (a repository, or the administration domain's types) the
 * caller may see, plus, for a user, the events it sees beyond them, counted directly (of chronicles it
 * owns under ACLs it may not read: `visibleEventTallies`). A user's own logins (A/audit) are counted directly.
 */
function talliedCount(scope: AuditScope, query: z.output<typeof auditQuerySchema>, filters: SqlPredicate[], readable: ReadableAcls | undefined): SqlPredicate | undefined {
  if (query.entryId || query.chronicalId || query.from || query.to) return undefined;
  const visible = visibleEventTallies(scope.principal, scope.repository ? { repositoryId: scope.repository.id, readable } : 'administration');
  if (!visible) return undefined;
  // the types counted: the one asked for; else a repository's events of any type (''), the administration
  // domain's of each of its types (its trail is a list of types, over every repository)
  const types = query.type
    ? scope.repository || administrationEventTypes.includes(query.type) ? [query.type] : []
    : scope.repository ? [''] : administrationEventTypes;
  const repository = scope.repository ? [{ sql: 't.repository_id = ?', params: [scope.repository.id] }] : [];
  const typesArray = `{${types.map((t) => `"${t}"`).join(',')}}`;
  const tally = conjunction([
    ...repository,
    // the rows of one grain (Migration20261128150000EventTallies): by type and actor 0, by type 1, by actor 2, in all 3
    { sql: 't.grain = ? and t.type = any(?::text[]) and t.actor = ?', params: [(types[0] === '' ? 2 : 0) + (query.actor ? 0 : 1), typesArray, query.actor ?? ''] },
    visible.tally,
  ]);
  // and the pending rows of the same events (grain 4: by type and actor, not rolled up into 0–3 yet)
  const pending = conjunction([
    ...repository,
    { sql: 't.grain = 4', params: [] },
    ...(types[0] === '' ? [] : [{ sql: 't.type = any(?::text[])', params: [typesArray] }]),
    ...(query.actor ? [{ sql: 't.actor = ?', params: [query.actor] }] : []),
    ...visible.pending,
  ]);
  const owned = visible.owned && conjunction([...filters, visible.owned]);
  return {
    sql: `select ((select coalesce(sum(t.n), 0) from event_tally t where ${tally.sql}) + (select coalesce(sum(t.n), 0) from event_tally t where ${pending.sql})${owned ? ` + (select count(*) from event ev where ${owned.sql})` : ''})::int as count`,
    params: [...tally.params, ...pending.params, ...(owned?.params ?? [])],
  };
}

/** How many expired events one statement of the retention job removes: short transactions, no long lock on the table. */
const retentionBatch = 10_000;

/** Removes the events older than `days` days (AUDIT_RETENTION_DAYS), a batch at a time: the periodic retention job. Answers how many. */
export async function removeExpiredEvents(em: EntityManager, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [{ count }] = await em.execute<[{ count: number }]>(
      `with removed as (
         delete from event where id in (select id from event where at < now() - make_interval(days => ?) limit ?) returning 1)
       select count(*)::int as count from removed`,
      [days, retentionBatch],
    );
    total += count;
    if (count < retentionBatch) return total;
  }
}
