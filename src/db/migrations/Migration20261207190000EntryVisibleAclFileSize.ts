import { Migration } from '@mikro-orm/migrations';

/**
 * The visible entries of each ACL in file-size order (then id): a caller who reads a fraction of the
 * repository reads a deep page of `orderBy=resource.fileSize` from its readable ACLs' first entries in
 * that order, merged (`deepPageIds`, src/modules/search/entry-query.ts), instead of walking every ACL's
 * entries up to the page (docs/benchmarks.md, "search — a user's deep page …"). It replaces
 * entry_visible_acl_idx, whose key is its prefix (the readable ACLs' bitmaps read it as they read that
 * one): the entry keeps as many indexes.
 */
export class Migration20261207190000EntryVisibleAclFileSize extends Migration {
  override up(): void {
    const visible = `is_latest and active and version_status is distinct from 'WORKING_COPY'`;
    this.addSql(`create index entry_visible_acl_file_size_idx on entry (repository_id, acl_id, resource_file_size, id) include (entry_type, owner) where ${visible};`);
    this.addSql(`drop index entry_visible_acl_idx;`);
  }
}
