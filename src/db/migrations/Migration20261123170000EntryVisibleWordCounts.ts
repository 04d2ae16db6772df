import { Migration } from '@mikro-orm/migrations';

/**
 * How many entries of entry_visible_words hold each word, per repository and entry type: a search for
 * one word counts its matches here instead of visiting each of them (Lucene answers a one-term query's
 * count from the term's document frequency the same way). At 1,000,000 contents, 400,000 matches took
 * 115 ms to count, and by-text ranked its page with that count running beside it on the same two cores
 * (docs/benchmarks.md).
 *
 * Kept as entry_visible_count is: every change of a row of entry_visible_words adds one row per word
 * of its net change (insert only, so concurrent writers never wait on a shared counter row; words the
 * change leaves as they were add nothing); the count is the sum. One change in fifty, at most one a
 * transaction, then folds the rows of its words into one per word, skipping rows another fold holds,
 * so folds neither block nor deadlock each other; a search that sums many rows for its word folds
 * them too (`searchVisibleWords`), so a word stays cheap to count after a bulk load.
 */
export class Migration20261123170000EntryVisibleWordCounts extends Migration {
  override up(): void {
    this.addSql(`create table entry_visible_word_count (repository_id text not null, word text not null, entry_type text not null, n bigint not null);`);
    // counted anew from the words: here, and after a bulk load made with the triggers below disabled
    this.addSql(`
      create function entry_visible_word_count_rebuild() returns void language sql as $$
        truncate entry_visible_word_count;
        insert into entry_visible_word_count
        select repository_id, word, entry_type, count(*) from entry_visible_words cross join unnest(tsvector_to_array(words)) as word group by 1, 2, 3;
      $$;`);
    this.addSql(`select entry_visible_word_count_rebuild();`);
    this.addSql(`create index entry_visible_word_count_idx on entry_visible_word_count (repository_id, word);`);
    this.addSql(`
      create function entry_visible_word_count_fold(repository text, folded_words text[]) returns void language sql as $$
        with folded as (
          -- by their row addresses (a TID scan): as 'ctid in (…)' the planner may hash-join a scan of the whole table
          delete from entry_visible_word_count where ctid = any(array(
            select ctid from entry_visible_word_count where repository_id = repository and word = any(folded_words) for update skip locked))
          returning word, entry_type, n)
        insert into entry_visible_word_count select repository, word, entry_type, sum(n) from folded group by word, entry_type having sum(n) <> 0;
      $$;`);
    // Row triggers: the insert, update and delete statements inside entry_visible_words' own triggers
    // change one row each, and a statement trigger's transition tables cost each of them more. On
    // insert OLD is null, on delete NEW is: the change is the new row's words counted in and the old
    // row's counted out.
    this.addSql(`
      create function entry_visible_word_count_change() returns trigger language plpgsql as $$
      begin
        insert into entry_visible_word_count
        select repository_id, word, entry_type, sum(d) from (
          select new.repository_id as repository_id, new.entry_type as entry_type, unnest(tsvector_to_array(new.words)) as word, 1 as d
          union all
          select old.repository_id, old.entry_type, unnest(tsvector_to_array(old.words)), -1
        ) change group by repository_id, word, entry_type having sum(d) <> 0;
        -- at most once a transaction: rows its own fold deleted stay in the index until it ends, and
        -- every later fold of the same words in it would walk them again
        if random() < 0.02 and current_setting('entry_visible_word_count.folded', true) is distinct from 'yes' then
          perform set_config('entry_visible_word_count.folded', 'yes', true);
          perform entry_visible_word_count_fold(coalesce(new.repository_id, old.repository_id), tsvector_to_array(coalesce(new.words, old.words)));
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger entry_visible_word_count_insert_delete after insert or delete on entry_visible_words for each row execute function entry_visible_word_count_change();`);
    this.addSql(`
      create trigger entry_visible_word_count_update after update on entry_visible_words for each row
        when ((old.repository_id, old.entry_type, old.words) is distinct from (new.repository_id, new.entry_type, new.words))
        execute function entry_visible_word_count_change();`);
    // a repository is deleted empty: what is left of its counts are rows that sum to nothing
    this.addSql(`
      create function entry_visible_word_count_repository_gone() returns trigger language plpgsql as $$
      begin
        delete from entry_visible_word_count where repository_id = old.id;
        return null;
      end $$;`);
    this.addSql(`create trigger entry_visible_word_count_repository_gone after delete on repository for each row execute function entry_visible_word_count_repository_gone();`);
    // The word of a query that is one word and nothing else (no prefix, no weights, no operator), else
    // null: tsquery writes it quoted, with ' and \\ doubled.
    this.addSql(`
      create function tsquery_single_word(query tsquery) returns text language sql immutable parallel safe as $$
        select case when numnode(query) = 1 then (
          select replace(replace(m[1], '''''', ''''), '\\\\', '\\')
          from regexp_match(query::text, '^''((?:[^''\\\\]|''''|\\\\\\\\)*)''$') as m)
        end
      $$;`);
  }

  override down(): void {
    this.addSql(`drop function tsquery_single_word(tsquery);`);
    this.addSql(`drop trigger entry_visible_word_count_repository_gone on repository;`);
    this.addSql(`drop function entry_visible_word_count_repository_gone();`);
    this.addSql(`drop trigger entry_visible_word_count_insert_delete on entry_visible_words;`);
    this.addSql(`drop trigger entry_visible_word_count_update on entry_visible_words;`);
    this.addSql(`drop function entry_visible_word_count_change();`);
    this.addSql(`drop function entry_visible_word_count_fold(text, text[]), entry_visible_word_count_rebuild();`);
    this.addSql(`drop table entry_visible_word_count;`);
  }
}
