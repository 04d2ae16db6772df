import { Migration } from '@mikro-orm/migrations';

/**
 * A migration of the stored bytes between the file system and S3 (src/storage/migrate.ts): the one
 * under way or done (`switched_at` set when every file was copied and the switch recorded), and the
 * files it copied and verified so far, so that a run killed midway goes on where it stopped.
 */
export class Migration20261128060000StorageMigration extends Migration {
  override up(): void {
    this.addSql(`
      create table storage_migration (
        target text primary key check (target in ('fs', 's3')),
        started_at timestamptz not null default now(),
        switched_at timestamptz
      );`);
    this.addSql(`
      create table storage_migration_copy (
        target text not null references storage_migration(target) on delete cascade,
        kind text not null check (kind in ('resource', 'representation')),
        id text not null,
        primary key (target, kind, id)
      );`);
  }
}
