import { Migration } from '@mikro-orm/migrations';

const shown = (row: string) => `(${row}.is_latest and ${row}.active and ${row}.version_status is distinct from 'WORKING_COPY')`;

/** The row triggers' insert of an entry's tags (Migration20261123040001EntryVisibleTags), with or without its ACL. */
const addTags = (withAcl: boolean) => `if ${shown('new')} then
            insert into entry_visible_tag (repository_id, tag, entry_id, entry_type${withAcl ? ', acl_id' : ''})
              select distinct new.repository_id, t.tag, new.id, new.entry_type${withAcl ? ', new.acl_id' : ''} from unnest(new.tags) as t(tag) on conflict do nothing;
          end if;`;
const removeTags = `if ${shown('old')} then
            delete from entry_visible_tag where repository_id = old.repository_id and tag = any(old.tags) and entry_id = old.id;
          end if;`;

function rowTriggerFunctions(withAcl: boolean): string[] {
  return Object.entries({ insert: addTags(withAcl), update: `${removeTags}\n          ${addTags(withAcl)}` }).map(
    ([event, body]) => `
      create or replace function entry_visible_tag_${event}() returns trigger language plpgsql as $$
      begin
        ${body}
        return null;
      end $$;`,
  );
}

/**
 * The tags of visible entries carry the entry's effective ACL, indexed by ACL and tag: a caller who
 * may not read the whole repository counts a tag-only search from the rows of the ACLs it may read
 * (an index-only range per readable ACL) instead of visiting every match in the entry table
 * (`'t3' in tags or 't4' in tags` as a user reading one content in ten at 1,000,000 contents: the count
 * visited 40,000 matches' rows; docs/benchmarks.md).
 *
 * The row triggers write the ACL with the tags; an ACL that changes under unchanged tags (acl_recompute:
 * a folder of 10,000 descendants moved) is followed by one statement trigger, as the words rows' is
 * (Migration20261129071000AclChangesPerStatement): the changed entries are a set difference of the
 * transition tables (no join a kept plan could make quadratic), and the update of their tag rows is
 * planned for each such statement (EXECUTE), so that a plan kept from a large change never scans every
 * tag row for a small one. A statement that changes no visible tagged entry's ACL (an upload's) reads
 * only its transition tables.
 */
export class Migration20261207090000VisibleTagAcls extends Migration {
  override up(): void {
    this.addSql(`alter table entry_visible_tag add column acl_id bigint;`);
    this.addSql(`update entry_visible_tag v set acl_id = e.acl_id from entry e where e.id = v.entry_id;`);
    this.addSql(`alter table entry_visible_tag alter column acl_id set not null;`);
    this.addSql(`create index entry_visible_tag_acl_idx on entry_visible_tag (repository_id, acl_id, tag, entry_id) include (entry_type);`);
    for (const sql of rowTriggerFunctions(true)) this.addSql(sql);
    this.addSql(`
      create function entry_visible_tag_acl() returns trigger language plpgsql as $$
      begin
        if exists (select id, acl_id from new_rows where ${shown('new_rows')} and cardinality(tags) > 0 except select id, acl_id from old_rows) then
          execute $u$
            update entry_visible_tag v set acl_id = c.acl_id
              from (select id, repository_id, acl_id, tags from new_rows where ${shown('new_rows')} and cardinality(tags) > 0
                    except select id, repository_id, acl_id, tags from old_rows) c
             where v.repository_id = c.repository_id and v.tag = any(c.tags) and v.entry_id = c.id and v.acl_id <> c.acl_id$u$;
        end if;
        return null;
      end $$;`);
    this.addSql(`
      create trigger entry_visible_tag_acl after update on entry referencing old table as old_rows new table as new_rows
        for each statement execute function entry_visible_tag_acl();`);
  }

  override down(): void {
    this.addSql(`drop trigger entry_visible_tag_acl on entry;`);
    this.addSql(`drop function entry_visible_tag_acl();`);
    for (const sql of rowTriggerFunctions(false)) this.addSql(sql);
    this.addSql(`drop index entry_visible_tag_acl_idx;`);
    this.addSql(`alter table entry_visible_tag drop column acl_id;`);
  }
}
