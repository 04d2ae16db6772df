import { Migration } from '@mikro-orm/migrations';

/** The grain of an event row not counted at grains 0–3 yet (Migration20261128150000EventTallies): by type and actor, under its chronicle's ACL only. */
export const pendingGrain = 4;

/**
 * An inserted event writes one `event_tally` row instead of eight (docs/benchmarks.md, "ingest — one
 * tally row an event"): the pending row of grain 4, by type and actor under its chronicle's ACL only.
 * Now and then (a draw a statement and repository) a statement rolls a repository's pending rows up
 * into grains 0–3 under their ACL and under every ACL (-1), folding those keys' rows with them. A count
 * sums its grain's rows and the pending rows that match (`event_tally_pending_idx`: a repository's are
 * few, ≈ 50 between two roll-ups), so it stays exact: a roll-up deletes the pending rows and adds their
 * sums in one statement. Removals (retention) and ACL moves still count at grains 0–3, which the pending
 * rows sum with; the share lock of the chronicles stays (the pending row's ACL is its chronicle's).
 */
export class Migration20261207180000EventTallyPending extends Migration {
  override up(): void {
    // a repository's pending rows: its roll-up, an administrator's counts (of every ACL), a user's (filtered by ACL)
    this.addSql(`create index event_tally_pending_idx on event_tally (repository_id, type, actor) include (acl_id, n) where grain = ${pendingGrain};`);

    // grains 0–3 of every pending row, under its ACL and under every ACL (-1)
    const spread = (rows: string) => `
      select x.acl_id, g.grain::smallint, g.type, g.actor, p.n from ${rows} p
        cross join lateral (values (p.acl_id), (-1)) x (acl_id)
        cross join lateral (values (0, p.type, p.actor), (1, p.type, ''), (2, '', p.actor), (3, '', '')) g (grain, type, actor)`;
    this.addSql(`
      create function event_tally_roll_up(repository text) returns void language sql as $$
        with pending as (
          delete from event_tally where ctid in (
            select ctid from event_tally where repository_id = repository and grain = ${pendingGrain} for update skip locked)
          returning acl_id, type, actor, n),
        added as (
          select acl_id, grain, type, actor, sum(n) as n from (${spread('pending')}) s group by 1, 2, 3, 4),
        folded as (
          delete from event_tally where ctid in (
            select t.ctid from event_tally t join added a on t.repository_id = repository and t.acl_id = a.acl_id and t.grain = a.grain and t.type = a.type and t.actor = a.actor
               for update of t skip locked)
          returning acl_id, grain, type, actor, n)
        insert into event_tally select repository, acl_id, grain, type, actor, sum(n)
          from (select * from added union all select * from folded) s group by acl_id, grain, type, actor having sum(n) <> 0;
      $$;`);
    // every key of a repository at once, its pending rows spread into their grains (bench/audit.ts after its bulk load)
    this.addSql(`
      create or replace function event_tally_fold_all(repository text) returns void language sql as $$
        with folded as (
          delete from event_tally where ctid in (select ctid from event_tally where repository_id = repository for update skip locked)
          returning acl_id, grain, type, actor, n)
        insert into event_tally select repository, acl_id, grain, type, actor, sum(n) from (
            select acl_id, grain, type, actor, n from folded where grain <> ${pendingGrain}
            union all ${spread(`(select * from folded where grain = ${pendingGrain})`)}) s
          group by acl_id, grain, type, actor having sum(n) <> 0;
      $$;`);
    this.addSql(`
      create or replace function event_tally_insert() returns trigger language plpgsql as $$
      declare k record;
      begin
        insert into event_chronicle (repository_id, chronical_id, acl_id)
          select distinct n.repository_id, n.chronical_id, event_chronicle_acl(n.repository_id, n.chronical_id) from new_rows n
           where n.repository_id is not null and n.chronical_id is not null
             and not exists (select 1 from event_chronicle c where c.repository_id = n.repository_id and c.chronical_id = n.chronical_id)
          on conflict do nothing;
        perform 1 from event_chronicle c where (c.repository_id, c.chronical_id) in (select repository_id, chronical_id from new_rows)
           order by c.repository_id, c.chronical_id for share of c;
        for k in
          with added as (
            insert into event_tally (repository_id, acl_id, grain, type, actor, n)
              select coalesce(ev.repository_id, ''), coalesce(c.acl_id, 0), ${pendingGrain}, ev.type, coalesce(ev.actor, ''), count(*) from new_rows ev
                left join event_chronicle c on c.repository_id = ev.repository_id and c.chronical_id = ev.chronical_id
               group by 1, 2, 4, 5
            returning repository_id)
          select distinct repository_id from added
        loop
          if random() < 0.02 then perform event_tally_roll_up(k.repository_id); end if;
        end loop;
        return null;
      end $$;`);
  }
}
