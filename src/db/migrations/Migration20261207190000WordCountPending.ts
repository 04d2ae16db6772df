import { Migration } from '@mikro-orm/migrations';

/**
 * A change of an entry's words (an upload's, a rename's, an extracted text's) writes one pending row of
 * its words' counts instead of one count row per word (docs/benchmarks.md, "ingest — the visible
 * words' counts pending"): `entry_visible_word_pending` holds the words of the change as an array with
 * the count they gain or lose (+1 or -1), under the entry's repository, ACL and type. Now and then (a
 * draw a change, at most one a transaction, as the folds' draw) a change rolls its repository's pending
 * rows up into entry_visible_word_count — one row per word, type and ACL of them — so a repository
 * keeps ≈ 50 pending rows between two roll-ups, and a word common to them gets one count row, not 50. A word's count is its count
 * rows and the pending rows that hold it (`buildVisibleWordsQuery`), exact at every moment: a roll-up
 * moves counts from pending rows to count rows in one transaction. An ACL move
 * (Migration20261129071000AclChangesPerStatement) still writes count rows, which the pending rows sum with.
 */
export class Migration20261207190000WordCountPending extends Migration {
  override up(): void {
    // words outside the index: a text's words are many (a btree tuple holds ≈ 2.7 kB)
    this.addSql(`create table entry_visible_word_pending (repository_id text not null, acl_id bigint, entry_type text not null, words text[] not null, n bigint not null);`);
    this.addSql(`create index entry_visible_word_pending_idx on entry_visible_word_pending (repository_id);`);
    // The pending rows' sums added as count rows (one per word, type and ACL of the roll-up); `fold`: those
    // words' rows under those ACLs folded too. Folding every roll-up's words looked up each word's rows
    // (≈ 4 an upload): it cost what the pending rows save (docs/benchmarks.md), so a roll-up in fifty
    // folds, and a search that sums many rows for its word folds them (`searchVisibleWords`).
    this.addSql(`
      create function entry_visible_word_count_roll_up(repository text, fold boolean default false) returns void language plpgsql as $$
      declare k record;
      begin
        for k in
          with pending as (
            -- by their row addresses (a TID scan), as entry_visible_word_count_fold
            delete from entry_visible_word_pending where ctid = any(array(
              select ctid from entry_visible_word_pending where repository_id = repository for update skip locked))
            returning acl_id, entry_type, words, n),
          added as (
            insert into entry_visible_word_count (repository_id, word, entry_type, acl_id, n)
            select repository, word, entry_type, acl_id, sum(n) from pending cross join unnest(words) as word group by word, entry_type, acl_id having sum(n) <> 0
            returning acl_id, word)
          select acl_id, array_agg(distinct word) as words from added where fold group by acl_id
        loop
          perform entry_visible_word_count_fold(repository, k.words, k.acl_id);
        end loop;
      end $$;`);
    // On insert OLD is null, on delete NEW is: the new row's words counted in, the old row's out. An
    // update adds its net change: the words it gains (+1) and those it loses (-1) under each key.
    this.addSql(`
      create or replace function entry_visible_word_count_change() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'UPDATE' then
          insert into entry_visible_word_pending (repository_id, acl_id, entry_type, words, n)
          select r.repository_id, r.acl_id, r.entry_type, tsvector_to_array(r.words), case tg_op when 'INSERT' then 1 else -1 end
            from (select coalesce(new.repository_id, old.repository_id) as repository_id, coalesce(new.acl_id, old.acl_id) as acl_id,
                         coalesce(new.entry_type, old.entry_type) as entry_type, coalesce(new.words, old.words) as words) r
           where length(r.words) > 0;
        else
          insert into entry_visible_word_pending (repository_id, acl_id, entry_type, words, n)
          select repository_id, acl_id, entry_type, array_agg(word), d from (
            select repository_id, word, entry_type, acl_id, sum(d) as d from (
              select new.repository_id as repository_id, new.entry_type as entry_type, new.acl_id as acl_id, unnest(tsvector_to_array(new.words)) as word, 1 as d
              union all
              select old.repository_id, old.entry_type, old.acl_id, unnest(tsvector_to_array(old.words)), -1
            ) change group by repository_id, word, entry_type, acl_id having sum(d) <> 0
          ) net group by repository_id, acl_id, entry_type, d;
        end if;
        -- at most once a transaction: rows its own roll-up deleted stay in the indexes until it ends, and
        -- every later roll-up in it would walk them again
        if random() < 0.02 and current_setting('entry_visible_word_count.folded', true) is distinct from 'yes' then
          perform set_config('entry_visible_word_count.folded', 'yes', true);
          perform entry_visible_word_count_roll_up(coalesce(new.repository_id, old.repository_id), random() < 0.02);
        end if;
        return null;
      end $$;`);
    this.addSql(`
      create or replace function entry_visible_word_count_rebuild() returns void language sql as $$
        truncate entry_visible_word_count, entry_visible_word_pending;
        insert into entry_visible_word_count (repository_id, word, entry_type, n, acl_id)
        select repository_id, word, entry_type, count(*), acl_id from entry_visible_words cross join unnest(tsvector_to_array(words)) as word group by repository_id, word, entry_type, acl_id;
      $$;`);
    this.addSql(`
      create or replace function entry_visible_word_count_repository_gone() returns trigger language plpgsql as $$
      begin
        delete from entry_visible_word_count where repository_id = old.id;
        delete from entry_visible_word_pending where repository_id = old.id;
        return null;
      end $$;`);
  }
}
