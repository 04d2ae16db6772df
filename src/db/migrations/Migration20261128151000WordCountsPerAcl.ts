import { Migration } from '@mikro-orm/migrations';
import { Migration20261123170000EntryVisibleWordCounts } from './Migration20261123170000EntryVisibleWordCounts.js';

/**
 * Each word's count kept per effective ACL too (issue 23 item 5, issue 27 item 6): a caller who may
 * not read the whole repository counts a one-word search as the sum of the word's rows over the ACLs
 * it may read (plus what it owns under others), instead of visiting every match (160–250 ms for the
 * common word of the search benchmark at 1,000,000 contents). An administrator sums every ACL's row of
 * the word. The table keeps at most one row per word and ACL after a fold: no more than the words'
 * occurrences the GIN index of entry_visible_words already holds.
 *
 * The rows are kept as before (Migration20261123170000EntryVisibleWordCounts): insert only, a fold now
 * and then — now of the words of the change's ACL only, so that a common word held under 10,000 ACLs
 * is not rewritten whole by every fiftieth upload. A change of an entry's effective ACL moves its
 * words from the old ACL's counts to the new one's.
 */
export class Migration20261128151000WordCountsPerAcl extends Migration {
  override up(): void {
    this.addSql(`alter table entry_visible_word_count add column acl_id bigint;`);
    this.addSql(`
      create or replace function entry_visible_word_count_rebuild() returns void language sql as $$
        truncate entry_visible_word_count;
        insert into entry_visible_word_count (repository_id, word, entry_type, n, acl_id)
        select repository_id, word, entry_type, count(*), acl_id from entry_visible_words cross join unnest(tsvector_to_array(words)) as word group by repository_id, word, entry_type, acl_id;
      $$;`);
    this.addSql(`drop index entry_visible_word_count_idx;`);
    this.addSql(`select entry_visible_word_count_rebuild();`);
    // index-only sums (the ACL first among the rest: a caller's readable ACLs are probed within the word)
    this.addSql(`create index entry_visible_word_count_idx on entry_visible_word_count (repository_id, word, acl_id) include (entry_type, n);`);
    this.addSql(`drop function entry_visible_word_count_fold(text, text[]);`);
    // folded_acl null: every ACL's rows of the words (a search that summed many rows folds them so)
    this.addSql(`
      create function entry_visible_word_count_fold(repository text, folded_words text[], folded_acl bigint default null) returns void language sql as $$
        with folded as (
          -- by their row addresses (a TID scan): as 'ctid in (…)' the planner may hash-join a scan of the whole table
          delete from entry_visible_word_count where ctid = any(array(
            select ctid from entry_visible_word_count
             where repository_id = repository and word = any(folded_words) and (folded_acl is null or acl_id is not distinct from folded_acl)
               for update skip locked))
          returning word, entry_type, acl_id, n)
        insert into entry_visible_word_count (repository_id, word, entry_type, acl_id, n)
        select repository, word, entry_type, acl_id, sum(n) from folded group by word, entry_type, acl_id having sum(n) <> 0;
      $$;`);
    this.addSql(`
      create or replace function entry_visible_word_count_change() returns trigger language plpgsql as $$
      begin
        insert into entry_visible_word_count (repository_id, word, entry_type, acl_id, n)
        select repository_id, word, entry_type, acl_id, sum(d) from (
          select new.repository_id as repository_id, new.entry_type as entry_type, new.acl_id as acl_id, unnest(tsvector_to_array(new.words)) as word, 1 as d
          union all
          select old.repository_id, old.entry_type, old.acl_id, unnest(tsvector_to_array(old.words)), -1
        ) change group by repository_id, word, entry_type, acl_id having sum(d) <> 0;
        -- at most once a transaction: rows its own fold deleted stay in the index until it ends, and
        -- every later fold of the same words in it would walk them again
        if random() < 0.02 and current_setting('entry_visible_word_count.folded', true) is distinct from 'yes' then
          perform set_config('entry_visible_word_count.folded', 'yes', true);
          perform entry_visible_word_count_fold(coalesce(new.repository_id, old.repository_id), tsvector_to_array(coalesce(new.words, old.words)), coalesce(new.acl_id, old.acl_id));
        end if;
        return null;
      end $$;`);
    this.addSql(`drop trigger entry_visible_word_count_update on entry_visible_words;`);
    this.addSql(`
      create trigger entry_visible_word_count_update after update on entry_visible_words for each row
        when ((old.repository_id, old.entry_type, old.words, old.acl_id) is distinct from (new.repository_id, new.entry_type, new.words, new.acl_id))
        execute function entry_visible_word_count_change();`);
  }

  /** The counts as Migration20261123170000EntryVisibleWordCounts made them: dropped, then made by it anew. */
  override down(): void {
    this.addSql(`drop trigger entry_visible_word_count_repository_gone on repository;`);
    this.addSql(`drop trigger entry_visible_word_count_insert_delete on entry_visible_words;`);
    this.addSql(`drop trigger entry_visible_word_count_update on entry_visible_words;`);
    this.addSql(`drop function entry_visible_word_count_repository_gone(), entry_visible_word_count_change(), tsquery_single_word(tsquery);`);
    this.addSql(`drop function entry_visible_word_count_fold(text, text[], bigint), entry_visible_word_count_rebuild();`);
    this.addSql(`drop table entry_visible_word_count;`);
    const previous = new Migration20261123170000EntryVisibleWordCounts(this.driver, this.config);
    previous.up();
    for (const query of previous.getQueries()) this.addSql(query);
  }
}
