import { Migration } from '@mikro-orm/migrations';

/**
 * The words of the entries a search shows by default (latest, active, not a working copy), one row per
 * entry: the name's words (weight A) and its resource's extracted text (resource_text.document), with
 * the entry's creation time. A search that is only a full-text match (by-text, or a condition that is
 * only `fullText('…')`) finds its page, its relevance and its count here (one GIN index over name and
 * text, narrow rows), instead of OR-ing the name index of `entry` with the text index of
 * `resource_text` and joining every match back (265 ms for a 2 % word at 1,000,000 contents, and the
 * SEARCH_TIMEOUT_MS for a 40 % word: docs/benchmarks.md).
 *
 * Kept by row triggers on `entry` (WHEN clauses let through only changes of what is kept here) and on
 * `resource_text` (a text arrives, is replaced or goes).
 */
export class Migration20261123050000EntryVisibleWords extends Migration {
  override up(): void {
    const visible = (row: string) => `(${row}.is_latest and ${row}.active and ${row}.version_status is distinct from 'WORKING_COPY')`;
    // the name's words as entry_name_words_idx splits them (src/modules/fulltext/query.ts), weighted A so that they rank above the text
    this.addSql(`
      create function entry_name_words(name text) returns tsvector language sql immutable parallel safe as
      $$ select setweight(to_tsvector('simple'::regconfig, translate(name, '._-/', '    ')), 'A') $$;`);
    this.addSql(`
      create function entry_words(name text, resource text) returns tsvector language sql stable parallel safe as
      $$ select entry_name_words(name) || coalesce((select t.document from resource_text t where t.resource_id = resource), ''::tsvector) $$;`);
    this.addSql(`
      create table entry_visible_words (
        entry_id text primary key,
        repository_id text not null,
        entry_type text not null,
        created_at timestamptz not null,
        words tsvector not null
      );`);
    this.addSql(`
      insert into entry_visible_words
      select e.id, e.repository_id, e.entry_type, e.created_at, entry_name_words(e.name) || coalesce(t.document, ''::tsvector)
      from entry e left join resource_text t on t.resource_id = e.resource_id
      where ${visible('e')};`);
    this.addSql(`create index entry_visible_words_idx on entry_visible_words using gin (words);`);
    this.addSql(`create index entry_visible_words_created_idx on entry_visible_words (repository_id, created_at, entry_id);`);

    const add = `if ${visible('new')} then
            insert into entry_visible_words values (new.id, new.repository_id, new.entry_type, new.created_at, entry_words(new.name, new.resource_id))
            on conflict (entry_id) do update set words = excluded.words;
          end if;`;
    const remove = `delete from entry_visible_words where entry_id = old.id;`;
    const triggers = {
      insert: { body: add, when: visible('new') },
      update: {
        body: `if not ${visible('new')} then ${remove} end if;\n          ${add}`,
        when: `${visible('old')} is distinct from ${visible('new')} or (${visible('new')} and (old.name is distinct from new.name or old.resource_id is distinct from new.resource_id))`,
      },
      delete: { body: remove, when: visible('old') },
    };
    for (const [event, { body, when }] of Object.entries(triggers)) {
      this.addSql(`
        create function entry_visible_words_${event}() returns trigger language plpgsql as $$
        begin
          ${body}
          return null;
        end $$;`);
      this.addSql(`create trigger entry_visible_words_${event} after ${event} on entry for each row when (${when}) execute function entry_visible_words_${event}();`);
    }
    this.addSql(`create function entry_visible_words_truncate() returns trigger language plpgsql as $$ begin delete from entry_visible_words; return null; end $$;`);
    this.addSql(`create trigger entry_visible_words_truncate after truncate on entry for each statement execute function entry_visible_words_truncate();`);

    // a resource's text arrives, is replaced or goes: the words of the visible entries on that resource follow
    const textTriggers = {
      set: { events: 'insert or update of text', resource: 'new.resource_id', text: 'new.document' },
      delete: { events: 'delete', resource: 'old.resource_id', text: `''::tsvector` },
    };
    for (const [name, { events, resource, text }] of Object.entries(textTriggers)) {
      this.addSql(`
        create function entry_visible_words_text_${name}() returns trigger language plpgsql as $$
        begin
          update entry_visible_words w set words = entry_name_words(e.name) || ${text}
          from entry e where e.resource_id = ${resource} and w.entry_id = e.id;
          return null;
        end $$;`);
      this.addSql(`create trigger entry_visible_words_text_${name} after ${events} on resource_text for each row execute function entry_visible_words_text_${name}();`);
    }
  }
}
