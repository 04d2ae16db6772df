import { Migration } from '@mikro-orm/migrations';

/**
 * The resource's file size and media type copied onto the entry row (`resource_file_size`,
 * `resource_mime_type`), so that `orderBy=resource.fileSize` and filters on size or type need no join
 * and an entry index can drive them: ordering on the outer-joined resource sorted the whole join
 * (2.8 s at 1,000,000 contents, docs/benchmarks.md). Triggers keep the copy equal to the resource
 * whatever statement sets an entry's resource (create, replace, check-in, copy, restore, raw SQL), and
 * when a resource's own fields change (an upload's claim may set its media type).
 *
 * `entry_visible_*` indexes are partial on the default visibility of a search (latest, active, not a
 * working copy) so that the planner can use them without a filter step on the heap.
 */
export class Migration20261122270000EntryResourceFields extends Migration {
  override up(): void {
    this.addSql(`alter table entry add column resource_file_size bigint, add column resource_mime_type text;`);
    this.addSql(`update entry e set resource_file_size = r.file_size, resource_mime_type = r.mime_type from resource r where r.id = e.resource_id;`);
    this.addSql(`
      create function entry_copy_resource_fields() returns trigger language plpgsql as $$
      begin
        if new.resource_id is null then
          new.resource_file_size := null;
          new.resource_mime_type := null;
        else
          select r.file_size, r.mime_type into new.resource_file_size, new.resource_mime_type from resource r where r.id = new.resource_id;
        end if;
        return new;
      end $$;`);
    this.addSql(`
      create trigger entry_copy_resource_fields before insert or update of resource_id, resource_file_size, resource_mime_type on entry
      for each row execute function entry_copy_resource_fields();`);
    this.addSql(`
      create function resource_fields_to_entries() returns trigger language plpgsql as $$
      begin
        update entry set resource_file_size = new.file_size, resource_mime_type = new.mime_type where resource_id = new.id;
        return null;
      end $$;`);
    this.addSql(`
      create trigger resource_fields_to_entries after update of file_size, mime_type on resource
      for each row when (old.file_size is distinct from new.file_size or old.mime_type is distinct from new.mime_type)
      execute function resource_fields_to_entries();`);
    // orderBy=resource.fileSize (asc, missing sizes last: the index's own order) paged by offset
    this.addSql(`create index entry_visible_file_size_idx on entry (repository_id, resource_file_size, id)
      where is_latest and active and version_status is distinct from 'WORKING_COPY';`);
    this.addSql(`create index entry_visible_mime_type_idx on entry (repository_id, resource_mime_type)
      where is_latest and active and version_status is distinct from 'WORKING_COPY';`);
    // counts of a repository's (or one entry type's) visible entries by an index-only scan
    this.addSql(`create index entry_visible_type_idx on entry (repository_id, entry_type)
      where is_latest and active and version_status is distinct from 'WORKING_COPY';`);
  }
}
