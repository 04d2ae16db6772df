import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for the searches (docs/search.md, docs/benchmarks.md): name equality and order, `like` /
 * `ilike` with wildcards anywhere (trigrams), dot paths (the parent, predecessor and resource keys),
 * `orderBy` with an offset over the default order and resource.fileSize, and the interim fullText()
 * over names. Every partial index is `where is_latest`, which every search without includeVersions implies.
 */
export class Migration20261122250000SearchIndexes extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm;`);
    // equality and order by name; with the C collation also `like 'abc*'`
    this.addSql(`create index entry_name_idx on entry (repository_id, name) where is_latest;`);
    // like / ilike with a leading wildcard (and prefixes under any collation)
    this.addSql(`create index entry_name_trgm_idx on entry using gin (name gin_trgm_ops);`);
    // the default order (createdAt, id) paged by offset
    this.addSql(`create index entry_created_idx on entry (repository_id, created_at, id) where is_latest;`);
    // a selective predecessor.<property> finds the predecessors first, then the versions that follow them
    // (parent.<property> does the same through entry_parent_idx, resource.<property> through entry_resource_idx)
    this.addSql(`create index entry_predecessor_idx on entry (predecessor_id) where predecessor_id is not null;`);
    // orderBy=resource.fileSize and resource.mimeType = …
    this.addSql(`create index resource_file_size_idx on resource (file_size);`);
    this.addSql(`create index resource_mime_type_idx on resource (mime_type);`);
    // fullText() until the full-text index lands: the words of the name (condition/compile.ts, fullTextDocument)
    this.addSql(`create index entry_name_words_idx on entry using gin (to_tsvector('simple'::regconfig, translate(name, '._-/', '    ')));`);
  }
}
