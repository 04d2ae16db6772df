import { Migration } from '@mikro-orm/migrations';

/**
 * entry_visible_words gets one GIN index per repository (`where repository_id = '<id>'`) in place of
 * one over every row. Every search of it names its repository, and with the index's predicate the
 * planner drops that condition from the rows it visits: counting 400,000 matches no longer reads each
 * row's repository (108 → 89 ms), and by-text's ranked page with its count beside it took 188 ms
 * instead of 211 (docs/benchmarks.md). Each row is still in one index, so writes cost the same.
 *
 * A repository's index comes and goes with its row (triggers): created with it — an index over no rows
 * yet, built in about 0.1 s at 1,000,000 entries, during which writes to entry_visible_words wait —
 * and dropped with it. The searches run as unnamed statements, planned with their parameters' values,
 * which is what lets the planner match the predicate.
 */
export class Migration20261123120000RepositoryWordIndexes extends Migration {
  override up(): void {
    this.addSql(`
      create function repository_words_index_name(repository_id text) returns text language sql immutable as $$
        select 'entry_visible_words_' || md5(repository_id)
      $$;`);
    this.addSql(`
      create function create_repository_words_index(repository_id text) returns void language plpgsql as $$
      begin
        execute format('create index if not exists %I on entry_visible_words using gin (words) where repository_id = %L', repository_words_index_name(repository_id), repository_id);
      end $$;`);
    this.addSql(`
      create function drop_repository_words_index(repository_id text) returns void language plpgsql as $$
      begin
        execute format('drop index if exists %I', repository_words_index_name(repository_id));
      end $$;`);
    this.addSql(`
      create function repository_words_index_create() returns trigger language plpgsql as $$
      begin
        perform create_repository_words_index(new.id);
        return null;
      end $$;`);
    this.addSql(`
      create function repository_words_index_drop() returns trigger language plpgsql as $$
      begin
        perform drop_repository_words_index(old.id);
        return null;
      end $$;`);
    this.addSql(`create trigger repository_words_index_create after insert on repository for each row execute function repository_words_index_create();`);
    this.addSql(`create trigger repository_words_index_drop after delete on repository for each row execute function repository_words_index_drop();`);
    this.addSql(`select create_repository_words_index(id) from repository;`);
    this.addSql(`drop index if exists entry_visible_words_idx;`);
  }

  override down(): void {
    this.addSql(`create index if not exists entry_visible_words_idx on entry_visible_words using gin (words);`);
    this.addSql(`select drop_repository_words_index(id) from repository;`);
    this.addSql(`drop trigger repository_words_index_create on repository;`);
    this.addSql(`drop trigger repository_words_index_drop on repository;`);
    this.addSql(`drop function repository_words_index_create(), repository_words_index_drop();`);
    this.addSql(`drop function create_repository_words_index(text), drop_repository_words_index(text), repository_words_index_name(text);`);
  }
}
