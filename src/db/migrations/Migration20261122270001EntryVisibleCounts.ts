import { Migration } from '@mikro-orm/migrations';

/** A statement trigger's transition tables for each event, and the sign of their rows in the statement's net change. */
export const statementTransitions = [
  { event: 'insert', referencing: 'new table as new_rows', sources: [['new_rows', 1]] },
  { event: 'update', referencing: 'new table as new_rows old table as old_rows', sources: [['new_rows', 1], ['old_rows', -1]] },
  { event: 'delete', referencing: 'old table as old_rows', sources: [['old_rows', -1]] },
] as const;

/**
 * How many entries of each type a repository shows by default (latest, active, not a working copy),
 * kept by triggers, so that a search without filters answers its `count` without visiting a million
 * rows (400 ms by a scan at 1,000,000 contents, docs/benchmarks.md). Every statement that changes
 * entries adds one row of its net change (insert only: concurrent writers never wait on a shared
 * counter row); the total is the sum. Now and then a statement folds a repository's rows into one,
 * skipping rows another fold holds, so folds neither block nor deadlock each other.
 */
export class Migration20261122270001EntryVisibleCounts extends Migration {
  override up(): void {
    const visible = `is_latest and active and version_status is distinct from 'WORKING_COPY'`;
    this.addSql(`create table entry_visible_count (repository_id text not null, entry_type text not null, n bigint not null);`);
    this.addSql(`create index entry_visible_count_idx on entry_visible_count (repository_id, entry_type);`);
    this.addSql(`insert into entry_visible_count select repository_id, entry_type, count(*) from entry where ${visible} group by 1, 2;`);
    this.addSql(`
      create function entry_visible_count_fold(repository text) returns void language sql as $$
        with folded as (
          delete from entry_visible_count where ctid in (
            select ctid from entry_visible_count where repository_id = repository for update skip locked)
          returning entry_type, n)
        insert into entry_visible_count select repository, entry_type, sum(n) from folded group by entry_type having sum(n) <> 0;
      $$;`);
    for (const { event, referencing, sources } of statementTransitions) {
      const changes = sources.map(([table, sign]) => `select repository_id, entry_type, ${sign} as d from ${table} where ${visible}`).join(' union all ');
      this.addSql(`
        create function entry_visible_count_${event}() returns trigger language plpgsql as $$
        declare repository text;
        begin
          for repository in
            insert into entry_visible_count select repository_id, entry_type, sum(d) from (${changes}) change
              group by repository_id, entry_type having sum(d) <> 0 returning repository_id
          loop
            if random() < 0.02 then perform entry_visible_count_fold(repository); end if;
          end loop;
          return null;
        end $$;`);
      this.addSql(`create trigger entry_visible_count_${event} after ${event} on entry referencing ${referencing}
        for each statement execute function entry_visible_count_${event}();`);
    }
    this.addSql(`create function entry_visible_count_truncate() returns trigger language plpgsql as $$ begin delete from entry_visible_count; return null; end $$;`);
    this.addSql(`create trigger entry_visible_count_truncate after truncate on entry for each statement execute function entry_visible_count_truncate();`);
  }
}
