import { Migration } from '@mikro-orm/migrations';

/**
 * Deep check reports (DESIGN §8): the result of each run, from which `reportUrl` renders its HTML page.
 * Few and small (the newest 20 of each repository are kept); they go with their repository.
 */
export class Migration20261123010000DeepCheckReports extends Migration {
  override up(): void {
    this.addSql(`
      create table deep_check_report (
        id text primary key,
        repository_id text not null references repository(id) on delete cascade,
        created_at timestamptz not null default clock_timestamp(),
        check_status text not null,
        result jsonb not null
      );`);
    this.addSql(`create index deep_check_report_repository_idx on deep_check_report (repository_id, created_at desc);`);
  }
}
