import { Migration } from '@mikro-orm/migrations';

/**
 * A resource's text that leaves its entries' words as they are (most often an empty text: a binary
 * upload, whose extraction reads nothing) no longer rewrites them: the update of entry_visible_words
 * with the same words made a new row version and ran its posting and word-count triggers for
 * nothing, once per upload (docs/benchmarks.md, "ingest — the upload's triggers and receive").
 * What the words are is unchanged: the entry's name words and the document, as before.
 */
export class Migration20261129161000UnchangedWordsKept extends Migration {
  override up(): void {
    this.addSql(`
      create or replace function entry_visible_words_text_set() returns trigger language plpgsql as $$
      begin
        update entry_visible_words w set words = t.words
          from entry e, lateral (select entry_name_words(e.name) || new.document as words) t
         where e.resource_id = new.resource_id and w.entry_id = e.id and w.words is distinct from t.words;
        return null;
      end $$;`);
  }

  override down(): void {
    this.addSql(`
      create or replace function entry_visible_words_text_set() returns trigger language plpgsql as $$
      begin
        update entry_visible_words w set words = entry_name_words(e.name) || new.document
        from entry e where e.resource_id = new.resource_id and w.entry_id = e.id;
        return null;
      end $$;`);
  }
}
