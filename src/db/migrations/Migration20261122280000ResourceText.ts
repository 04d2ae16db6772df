import { Migration } from '@mikro-orm/migrations';

/**
 * The text extracted from a resource (docs/search.md, full text): one row per resource, written whole
 * in one statement by the extraction job (a worker killed midway leaves no row, never half of one), its
 * words in a generated `tsvector` under the language-neutral 'simple' configuration with a GIN index.
 * A resource is immutable file data, so a new version (a new resource) gets a new row, and the row goes
 * with its resource.
 */
export class Migration20261122280000ResourceText extends Migration {
  override up(): void {
    this.addSql(`
      create table resource_text (
        resource_id text primary key references resource(id) on delete cascade,
        repository_id text not null references repository(id) on delete cascade,
        text text not null,
        truncated boolean not null default false,
        extracted_at timestamptz not null default now(),
        document tsvector generated always as (to_tsvector('simple'::regconfig, text)) stored
      );`);
    this.addSql(`create index resource_text_document_idx on resource_text using gin (document);`);
  }
}
