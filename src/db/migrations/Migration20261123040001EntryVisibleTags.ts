import { Migration } from '@mikro-orm/migrations';

/**
 * The tags of the entries a search shows by default (latest, active, not a working copy), one row per
 * entry and tag: a tag-only search (`'x' in tags or …`, the property search's `tags`) counts its
 * matches by an index-only scan here instead of visiting every match in the entry table (GIN has no
 * index-only scans: 217 ms for 40,000 of 1,000,000 contents, docs/benchmarks.md).
 *
 * Row triggers whose WHEN clause (checked without calling a function) lets through only rows that
 * carry tags and change what is kept here: an upload without tags, and an update that leaves tags
 * and visibility alone, cost nothing more (statement triggers with transition tables cost every
 * upload ≈ 0.1 ms even then; docs/benchmarks.md).
 */
export class Migration20261123040001EntryVisibleTags extends Migration {
  override up(): void {
    const visible = (row: string) => `(${row}.is_latest and ${row}.active and ${row}.version_status is distinct from 'WORKING_COPY')`;
    const tagged = (row: string) => `cardinality(${row}.tags) > 0`;
    this.addSql(`
      create table entry_visible_tag (
        repository_id text not null,
        tag text not null,
        entry_id text not null,
        entry_type text not null,
        primary key (repository_id, tag, entry_id) include (entry_type)
      );`);
    this.addSql(`insert into entry_visible_tag select distinct e.repository_id, t.tag, e.id, e.entry_type from entry e cross join unnest(e.tags) as t(tag) where ${visible('e')};`);
    const add = `if ${visible('new')} then
            insert into entry_visible_tag select distinct new.repository_id, t.tag, new.id, new.entry_type from unnest(new.tags) as t(tag) on conflict do nothing;
          end if;`;
    const remove = `if ${visible('old')} then
            delete from entry_visible_tag where repository_id = old.repository_id and tag = any(old.tags) and entry_id = old.id;
          end if;`;
    const triggers = {
      insert: { body: add, when: `${tagged('new')} and ${visible('new')}` },
      update: {
        body: `${remove}\n          ${add}`,
        when: `(${tagged('old')} or ${tagged('new')}) and (old.tags is distinct from new.tags or ${visible('old')} is distinct from ${visible('new')})`,
      },
      delete: { body: remove, when: `${tagged('old')} and ${visible('old')}` },
    };
    for (const [event, { body, when }] of Object.entries(triggers)) {
      this.addSql(`
        create function entry_visible_tag_${event}() returns trigger language plpgsql as $$
        begin
          ${body}
          return null;
        end $$;`);
      this.addSql(`create trigger entry_visible_tag_${event} after ${event} on entry for each row when (${when}) execute function entry_visible_tag_${event}();`);
    }
    this.addSql(`create function entry_visible_tag_truncate() returns trigger language plpgsql as $$ begin delete from entry_visible_tag; return null; end $$;`);
    this.addSql(`create trigger entry_visible_tag_truncate after truncate on entry for each statement execute function entry_visible_tag_truncate();`);
  }
}
