import { Migration } from '@mikro-orm/migrations';

/**
 * Each event counts at four grains (`g`, joined to the event row `ev`): by type and actor (0), by type
 * (1), by actor (2), in all (3), the columns it does not count by ''. A count filtered by type, by actor,
 * by both or by neither then sums rows of one exact key per ACL: an index probe each (a user's 1,000
 * readable ACLs: 1,000 rows, not the 12,350 of every type and actor under them).
 */
const grains = `cross join lateral (values (0, ev.type, coalesce(ev.actor, '')), (1, ev.type, ''), (2, '', coalesce(ev.actor, '')), (3, '', '')) g (grain, type, actor)`;

/** The tally key of an event row `ev` (with its `grains` g) whose chronicle's key row is `c` (left joined): none is '' or 0, so keys compare with `=`. */
const tallyKey = `coalesce(ev.repository_id, ''), coalesce(c.acl_id, 0), g.grain, g.type, g.actor`;

/** The tally rows of every ACL at once: administrators' counts, which no ACL change moves. */
const everyAcl = -1;

/** The rows `rows` (event rows as `ev`) add to event_tally, times `sign`: under their chronicle's ACL, and under every ACL. */
const eventCounts = (rows: string, sign: number) => `
  select ${tallyKey}, ${sign} * count(*) from ${rows} ev
    left join event_chronicle c on c.repository_id = ev.repository_id and c.chronical_id = ev.chronical_id ${grains} group by 1, 2, 3, 4, 5
  union all
  select coalesce(ev.repository_id, ''), ${everyAcl}, g.grain, g.type, g.actor, ${sign} * count(*) from ${rows} ev ${grains} group by 1, 2, 3, 4, 5`;

/** Adds the rows `select` yields (key columns, n; after the common table expressions `ctes`) to event_tally; now and then folds a key's rows into one. */
const addToTally = (select: string, ctes = '') => `
  for k in ${ctes} insert into event_tally (repository_id, acl_id, grain, type, actor, n) ${select} returning repository_id, acl_id, grain, type, actor
  loop
    if random() < 0.02 then perform event_tally_fold(k.repository_id, k.acl_id, k.grain, k.type, k.actor); end if;
  end loop;`;

/**
 * The function of the trigger `event_chronicle_follow_<event>` on entry: the chronicles of the entries
 * `changed` selects (repository_id, chronical_id, from the statement's transition tables) are counted
 * under their ACL as it is now, their events' counts moved with them.
 */
export const chronicleFollowFunction = (event: 'insert' | 'update' | 'delete', changed: string, { replace = false } = {}) => `
    ${replace ? 'create or replace' : 'create'} function event_chronicle_follow_${event}() returns trigger language plpgsql as $$
    declare
      k record;
      repositories text[];
      chronicles text[];
      counted_under bigint[];
    begin
      select array_agg(repository_id), array_agg(chronical_id), array_agg(acl_id) into repositories, chronicles, counted_under from (
        select c.repository_id, c.chronical_id, c.acl_id from event_chronicle c
         where (c.repository_id, c.chronical_id) in (${changed})
         order by c.repository_id, c.chronical_id for update of c) locked;
      if repositories is null then return null; end if;
      ${addToTally(
        `select m.r, x.acl, g.grain, g.type, g.actor, sum(x.sign)
           from moved m join event ev on ev.chronical_id = m.ch and ev.repository_id = m.r ${grains}
           cross join lateral (values (m.was, -1), (m.now, 1)) x (acl, sign)
          group by 1, 2, 3, 4, 5 having sum(x.sign) <> 0`,
        `with target as (
           select r, ch, was, event_chronicle_acl(r, ch) as now from unnest(repositories, chronicles, counted_under) u (r, ch, was)),
         moved as (
           update event_chronicle c set acl_id = t.now from target t
            where c.repository_id = t.r and c.chronical_id = t.ch and t.now <> t.was returning t.r, t.ch, t.was, t.now)`,
      )}
      return null;
    end $$;`;

/**
 * The function of the trigger `event_tally_<event>` on event. Events are appended and removed
 * (retention), never updated. The chronicles' rows are locked in one order (share: an entry change
 * moving them waits, or is waited for); the next statement reads them. An inserted event's chronicle
 * gets its row when it has none; the ACL is looked up (event_chronicle_acl: a SQL function, planned at
 * each call) only for a chronicle without one — most events are of a chronicle counted already (a
 * conversion job's three changes of state, a content's versions).
 */
export const eventTallyFunction = (event: 'insert' | 'delete', { replace = false } = {}) => {
  const [rows, sign]: [string, number] = event === 'insert' ? ['new_rows', 1] : ['old_rows', -1];
  return `
    ${replace ? 'create or replace' : 'create'} function event_tally_${event}() returns trigger language plpgsql as $$
    declare k record;
    begin
      ${
        event === 'insert'
          ? `insert into event_chronicle (repository_id, chronical_id, acl_id)
               select distinct n.repository_id, n.chronical_id, event_chronicle_acl(n.repository_id, n.chronical_id) from new_rows n
                where n.repository_id is not null and n.chronical_id is not null
                  and not exists (select 1 from event_chronicle c where c.repository_id = n.repository_id and c.chronical_id = n.chronical_id)
               on conflict do nothing;`
          : ''
      }
      perform 1 from event_chronicle c where (c.repository_id, c.chronical_id) in (select repository_id, chronical_id from ${rows})
         order by c.repository_id, c.chronical_id for share of c;
      ${addToTally(eventCounts(rows, sign))}
      return null;
    end $$;`;
};

/**
 * The audit trail's counts kept in the events' own transactions (issue 24 item 2): an exact `count` of
 * a large filtered set read every matching index entry (464 ms for a repository's million events), and
 * a user's joined each event's chronicle to the entries it may read (up to 1.1 s, docs/benchmarks.md).
 *
 * `event_tally`: how many events there are per repository, type, actor (at four grains) and the ACL of the event's
 * chronicle, and per repository, type and actor under the ACL key -1 (every ACL: administrators') — insert-only rows of net changes, one per statement and key, as the statistics tallies
 * (Migration20261128080000StatisticsTallies), so concurrent writers never wait on a shared row; a key's
 * rows are folded into one now and then. A count filtered by type and/or actor is a sum over these rows:
 * an administrator's over the repository's, a user's over the ACLs it may read (plus, counted directly,
 * the events of the chronicles it owns under other ACLs).
 *
 * `event_chronicle`: the ACL a chronicle's events are counted under — its entries' effective ACL (all
 * versions of a content share it: acl-operations.ts `aclRows`), 0 once no entry is left (purged: its
 * events are administrators' only). Entry changes keep it and move the chronicle's counts with it, in
 * their own statement; the row is locked for that (for update), and an event insert or removal reads it
 * under a share lock, so that a count moved and a count added concurrently never miss each other. Rows
 * outlive their events (a chronicle's row is small and keeps following its entries).
 */
export class Migration20261128150000EventTallies extends Migration {
  override up(): void {
    this.addSql(`
      create table event_chronicle (
        repository_id text not null,
        chronical_id text not null,
        acl_id bigint not null,
        primary key (repository_id, chronical_id)
      );`);
    this.addSql(`create table event_tally (repository_id text not null, acl_id bigint not null, grain smallint not null, type text not null, actor text not null, n bigint not null);`);
    // the audit trail's pages and counts are short index reads: a parallel worker's start cost more than
    // the page (17 ms of a 23 ms page, measured at load 6); counts of large sets come from the tallies
    this.addSql(`alter table event set (parallel_workers = 0);`);
    // a user's sums (its readable ACLs), an administrator's of a repository, the folds (a key); the administration domain's (by type, over every repository)
    this.addSql(`create index event_tally_acl_idx on event_tally (repository_id, acl_id, grain, type, actor) include (n);`);
    this.addSql(`create index event_tally_every_acl_idx on event_tally (acl_id, grain, type, actor) include (n) where acl_id = -1;`);
    // the chronicles of the ACLs a user may read (its visibility, access/policy.ts visibleEvents)
    this.addSql(`create index event_chronicle_acl_idx on event_chronicle (repository_id, acl_id) include (chronical_id);`);
    // the chronicles a user owns an entry of (their events are its to see whatever their ACL)
    this.addSql(`create index entry_owner_chronicle_idx on entry (repository_id, owner, chronical_id);`);

    this.addSql(`
      create function event_chronicle_acl(repository text, chronicle text) returns bigint language sql stable as $$
        select coalesce(min(acl_id), 0) from entry where chronical_id = chronicle and repository_id = repository
      $$;`);
    this.addSql(`
      create function event_tally_fold(repository text, acl bigint, counted_by smallint, event_type text, who text) returns void language sql as $$
        with folded as (
          delete from event_tally where ctid in (
            select ctid from event_tally where repository_id = repository and acl_id = acl and grain = counted_by and type = event_type and actor = who
               for update skip locked)
          returning n)
        insert into event_tally select repository, acl, counted_by, event_type, who, sum(n) from folded having sum(n) <> 0;
      $$;`);
    // every key of a repository at once: after a bulk load (bench/audit.ts)
    this.addSql(`
      create function event_tally_fold_all(repository text) returns void language sql as $$
        with folded as (
          delete from event_tally where ctid in (select ctid from event_tally where repository_id = repository for update skip locked)
          returning acl_id, grain, type, actor, n)
        insert into event_tally select repository, acl_id, grain, type, actor, sum(n) from folded group by acl_id, grain, type, actor having sum(n) <> 0;
      $$;`);

    this.addSql(`insert into event_chronicle select distinct repository_id, chronical_id, event_chronicle_acl(repository_id, chronical_id) from event where repository_id is not null and chronical_id is not null;`);
    this.addSql(`insert into event_tally ${eventCounts('event', 1)};`);

    for (const event of ['insert', 'delete'] as const) {
      this.addSql(eventTallyFunction(event));
      const rows = event === 'insert' ? 'new_rows' : 'old_rows';
      this.addSql(`create trigger event_tally_${event} after ${event} on event referencing ${event === 'insert' ? 'new' : 'old'} table as ${rows}
        for each statement execute function event_tally_${event}();`);
    }
    this.addSql(`create function event_tally_truncate() returns trigger language plpgsql as $$ begin delete from event_tally; delete from event_chronicle; return null; end $$;`);
    this.addSql(`create trigger event_tally_truncate after truncate on event for each statement execute function event_tally_truncate();`);

    // An entry inserted, deleted, or given another effective ACL (acl_recompute): the chronicles it
    // belongs to are counted under their ACL as it is now, their events' counts moved with them.
    for (const [event, changed] of [
      ['insert', 'select repository_id, chronical_id from new_rows'],
      ['update', 'select n.repository_id, n.chronical_id from new_rows n join old_rows o on o.id = n.id where o.acl_id is distinct from n.acl_id'],
      ['delete', 'select repository_id, chronical_id from old_rows'],
    ] as const) {
      const referencing = { insert: 'new table as new_rows', update: 'new table as new_rows old table as old_rows', delete: 'old table as old_rows' }[event];
      this.addSql(chronicleFollowFunction(event, changed));
      this.addSql(`create trigger event_chronicle_follow_${event} after ${event} on entry referencing ${referencing}
        for each statement execute function event_chronicle_follow_${event}();`);
    }
  }
}
