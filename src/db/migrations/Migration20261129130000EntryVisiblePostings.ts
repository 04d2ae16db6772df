import { Migration } from '@mikro-orm/migrations';

/**
 * The postings of entry_visible_words: one row per distinct word of each row, in a B-tree ordered by
 * repository, word and creation (issue 27 item 6, issue 23 item 5). By-text ranks the newest 1,000
 * matches of a one-word query (`relevanceCandidates`); the GIN index finds every match of the word and
 * they were sorted by creation (56 ms of SQL for a word in 2 % of 1,000,000 contents, growing with
 * them), where the word's postings give its newest matches in order, 1,000 index tuples at any size
 * (Lucene's postings are kept in document order for the same reason). Measured in docs/benchmarks.md.
 *
 * Kept by row triggers on entry_visible_words, as its words' counts are
 * (Migration20261123170000EntryVisibleWordCounts): every way an entry's words change (upload, extracted
 * text, rename, a new version, delete, restore, purge, a repository gone) is a change of its words row,
 * and that change's words are added or taken away here; the words both rows hold stay. ACL and owner
 * are not kept here (a folder's move would rewrite its subtree's postings): a caller who may not read
 * everything checks each posting's words row.
 */
export class Migration20261129130000EntryVisiblePostings extends Migration {
  override up(): void {
    this.addSql(`
      create table entry_visible_posting (
        repository_id text not null,
        word text not null,
        created_at timestamptz not null,
        entry_id text not null,
        primary key (repository_id, word, created_at, entry_id)
      );`);
    // made anew from the words: here, and after a bulk load made with the triggers below disabled
    this.addSql(`
      create function entry_visible_posting_rebuild() returns void language sql as $$
        truncate entry_visible_posting;
        insert into entry_visible_posting (repository_id, word, created_at, entry_id)
        select repository_id, word, created_at, entry_id from entry_visible_words cross join unnest(tsvector_to_array(words)) as word
        -- in the index's order: each insert goes to the last page of the index, left full (in any other order pages split half full)
         order by 1, 2, 3, 4;
      $$;`);
    this.addSql(`select entry_visible_posting_rebuild();`);
    // On insert OLD is null, on delete NEW is; an update that keeps the row's key keeps the postings of the words both rows hold.
    this.addSql(`
      create function entry_visible_posting_change() returns trigger language plpgsql as $$
      declare
        kept text[] := '{}';
      begin
        if tg_op = 'UPDATE' and (old.repository_id, old.created_at, old.entry_id) = (new.repository_id, new.created_at, new.entry_id) then
          kept := array(select unnest(tsvector_to_array(old.words)) intersect select unnest(tsvector_to_array(new.words)));
        end if;
        if tg_op <> 'INSERT' then
          delete from entry_visible_posting
           where repository_id = old.repository_id and word = any(array(select unnest(tsvector_to_array(old.words)) except select unnest(kept)))
             and created_at = old.created_at and entry_id = old.entry_id;
        end if;
        if tg_op <> 'DELETE' then
          insert into entry_visible_posting (repository_id, word, created_at, entry_id)
          select new.repository_id, word, new.created_at, new.entry_id from unnest(tsvector_to_array(new.words)) as word where word <> all(kept);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger entry_visible_posting_insert_delete after insert or delete on entry_visible_words for each row execute function entry_visible_posting_change();`);
    // an ACL or owner change (entry_visible_words_acl) sets neither of these columns
    this.addSql(`
      create trigger entry_visible_posting_update after update of repository_id, created_at, entry_id, words on entry_visible_words for each row
        when ((old.repository_id, old.created_at, old.entry_id, old.words) is distinct from (new.repository_id, new.created_at, new.entry_id, new.words))
        execute function entry_visible_posting_change();`);
  }

  override down(): void {
    this.addSql(`drop trigger entry_visible_posting_insert_delete on entry_visible_words;`);
    this.addSql(`drop trigger entry_visible_posting_update on entry_visible_words;`);
    this.addSql(`drop function entry_visible_posting_change(), entry_visible_posting_rebuild();`);
    this.addSql(`drop table entry_visible_posting;`);
  }
}
