import { Migration } from '@mikro-orm/migrations';

/**
 * What identifies the ACLs a repository holds (AclCache.readableOf checks it at every request of a caller
 * who is not an administrator), kept by a trigger instead of counted: counting the repository's `acl` rows
 * was a scan of all of them (1.3–1.6 ms a request at 10,000 ACLs, docs/benchmarks.md "srch7").
 * `acl_tally` holds rows of ACLs added (`n`) and the highest id among them (`newest`): every statement that
 * adds ACLs adds one row a repository in the same transaction, so in any snapshot the rows' sum is the
 * count of the `acl` rows that snapshot sees and their highest `newest` the highest id it sees — the same
 * figures as before, exact whatever order ACLs commit in. Insert only: concurrent creators of ACLs never
 * wait on a shared row; now and then a statement folds a repository's rows into one, skipping rows another
 * fold holds, as entry_visible_count's folds do.
 */
export class Migration20261207200000AclTally extends Migration {
  override up(): void {
    this.addSql(`create table acl_tally (repository_id text not null references repository(id) on delete cascade, n bigint not null, newest bigint not null);`);
    this.addSql(`create index acl_tally_idx on acl_tally (repository_id) include (n, newest);`);
    this.addSql(`insert into acl_tally select repository_id, count(*), max(id) from acl group by repository_id;`);
    this.addSql(`
      create function acl_tally_fold(repository text) returns void language sql as $$
        with folded as (
          delete from acl_tally where ctid in (select ctid from acl_tally where repository_id = repository for update skip locked)
          returning n, newest)
        insert into acl_tally select repository, sum(n), max(newest) from folded having count(*) > 0;
      $$;`);
    this.addSql(`
      create function acl_tally_insert() returns trigger language plpgsql as $$
      declare repository text;
      begin
        for repository in
          insert into acl_tally select repository_id, count(*), max(id) from new_rows group by repository_id returning repository_id
        loop
          if random() < 0.1 then perform acl_tally_fold(repository); end if;
        end loop;
        return null;
      end $$;`);
    this.addSql(`create trigger acl_tally_insert after insert on acl referencing new table as new_rows for each statement execute function acl_tally_insert();`);
    this.addSql(`create function acl_tally_truncate() returns trigger language plpgsql as $$ begin delete from acl_tally; return null; end $$;`);
    this.addSql(`create trigger acl_tally_truncate after truncate on acl for each statement execute function acl_tally_truncate();`);
  }
}
