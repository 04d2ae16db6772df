import { Migration } from '@mikro-orm/migrations';

/**
 * `orderBy=resource.fileSize` with `entryType` paged by offset, answered by an index-only scan: the
 * search selects the page's ids first, and `entry_type` in the index lets the scan skip the offset's
 * rows without reading them (docs/search.md, "Indexes"; 10,100 heap fetches before, none after).
 */
export class Migration20261123040000SearchPageIndexes extends Migration {
  override up(): void {
    this.addSql(`create index entry_visible_file_size_type_idx on entry (repository_id, resource_file_size, id) include (entry_type)
      where is_latest and active and version_status is distinct from 'WORKING_COPY';`);
    this.addSql(`drop index entry_visible_file_size_idx;`);
  }
}
