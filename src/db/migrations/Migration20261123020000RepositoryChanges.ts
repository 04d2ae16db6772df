import { Migration } from '@mikro-orm/migrations';

/**
 * Every change of a repository row (limits, flags, deletion; through the API or plain SQL) announces
 * the repository's name on `repository_changed`, delivered when the change commits: each process
 * forgets its cached record of it (src/modules/repositories/repository-cache.ts), so conversion and full-text
 * behaviour follow the record at once everywhere.
 */
export class Migration20261123020000RepositoryChanges extends Migration {
  override up(): void {
    this.addSql(`
      create function repository_announce_change() returns trigger language plpgsql as $$
      begin
        perform pg_notify('repository_changed', old.name);
        return null;
      end $$;`);
    this.addSql(`create trigger repository_announce_change after update or delete on repository for each row execute function repository_announce_change();`);
  }
}
