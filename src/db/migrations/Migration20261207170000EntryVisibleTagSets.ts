import { Migration } from '@mikro-orm/migrations';
import { statementTransitions } from './Migration20261122270001EntryVisibleCounts.js';
import { entryVisibleCountFunction } from './Migration20261127020000Acls.js';

/**
 * How many visible entries (latest, active, not a working copy) carry each set of tags, per effective
 * ACL and entry type: a caller who may not read the whole repository counts a search that asks only
 * for tags (`'a' in tags or 'b' in tags`, the property search's `tags`) by evaluating the condition
 * once per tag set of its readable ACLs, instead of visiting every readable match (10,000 of 1,000,000
 * contents in the search benchmark: 23 ms, ten times what it costs at 100,000; docs/benchmarks.md).
 * A whole tag set, not a row per tag: any condition over one entry's tags (an `or` needs its
 * intersections, an `and` its pairs) holds or fails for all the entries that share the set.
 *
 * Kept by the statement triggers that keep entry_visible_count (Migration20261127020000Acls), in the
 * statement that changes the entries: each statement adds one row per ACL, type and tag set of its net
 * change (insert only, so concurrent writers never wait on a shared counter row; a statement that
 * leaves tags, ACL and visibility alone adds nothing), and about one statement in fifty folds the rows
 * of the ACLs it touched into one per tag set (`entry_visible_tag_set_fold`, skipping rows a concurrent
 * fold holds). Untagged entries have no rows. The tags stay out of the btree (an entry of one is bounded,
 * ≈ 2.7 kB, a tag set is not) and have a GIN index: a count reads the sets that hold a named tag, or
 * those of the caller's ACLs, or both intersected, as the planner weighs them — by the ACLs alone, 200,000
 * distinct tag sets under the readable ACLs cost a rare tag's count 130–250 ms (docs/benchmarks.md).
 */
export class Migration20261207170000EntryVisibleTagSets extends Migration {
  override up(): void {
    const visible = `is_latest and active and version_status is distinct from 'WORKING_COPY'`;
    this.addSql(`create table entry_visible_tag_set (repository_id text not null, acl_id bigint not null, entry_type text not null, tags text[] not null, n bigint not null);`);
    this.addSql(`
      insert into entry_visible_tag_set (repository_id, acl_id, entry_type, tags, n)
      select repository_id, acl_id, entry_type, tags, count(*) from entry where ${visible} and cardinality(tags) > 0 group by 1, 2, 3, 4;`);
    this.addSql(`create index entry_visible_tag_set_acl_idx on entry_visible_tag_set (repository_id, acl_id);`);
    this.addSql(`create index entry_visible_tag_set_tags_idx on entry_visible_tag_set using gin (tags);`);
    // folded_acls null: every ACL's rows (after a bulk load)
    this.addSql(`
      create function entry_visible_tag_set_fold(repository text, folded_acls bigint[] default null) returns void language sql as $$
        with folded as (
          -- by their row addresses (a TID scan), as entry_visible_word_count_fold
          delete from entry_visible_tag_set where ctid = any(array(
            select ctid from entry_visible_tag_set
             where repository_id = repository and (folded_acls is null or acl_id = any(folded_acls))
               for update skip locked))
          returning acl_id, entry_type, tags, n)
        insert into entry_visible_tag_set (repository_id, acl_id, entry_type, tags, n)
        select repository, acl_id, entry_type, tags, sum(n) from folded group by acl_id, entry_type, tags having sum(n) <> 0;
      $$;`);
    for (const { event, sources } of statementTransitions) {
      const tagChanges = sources
        .map(([table, sign]) => `select repository_id, acl_id, entry_type, tags, ${sign} as d from ${table} where ${visible} and cardinality(tags) > 0`)
        .join(' union all ');
      // the same change by tag set; a fold now and then of the ACLs changed
      this.addSql(
        entryVisibleCountFunction(event, sources, {
          declare: `
          acls bigint[];`,
          body: `
          for repository, acls in
            with added as (
              insert into entry_visible_tag_set (repository_id, acl_id, entry_type, tags, n) select repository_id, acl_id, entry_type, tags, sum(d) from (${tagChanges}) change
                group by repository_id, acl_id, entry_type, tags having sum(d) <> 0 returning repository_id, acl_id)
            select repository_id, array_agg(distinct acl_id) from added group by repository_id
          loop
            if random() < 0.02 then perform entry_visible_tag_set_fold(repository, acls); end if;
          end loop;`,
        }),
      );
    }
    this.addSql(`
      create or replace function entry_visible_count_truncate() returns trigger language plpgsql as $$
      begin
        delete from entry_visible_count;
        delete from entry_visible_tag_set;
        return null;
      end $$;`);
  }
}
