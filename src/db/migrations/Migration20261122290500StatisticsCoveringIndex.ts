import { Migration } from '@mikro-orm/migrations';

/**
 * Repository statistics aggregate every latest entry (type, active flag, size): an index holding just
 * those columns lets Postgres answer by an index-only scan instead of reading the wide entry rows
 * (p95 709 ms at 1,000,000 contents with a sequential scan, docs/benchmarks.md).
 */
export class Migration20261122290500StatisticsCoveringIndex extends Migration {
  override up(): void {
    this.addSql(`create index entry_statistics_idx on entry (repository_id, entry_type, active, resource_file_size) where is_latest;`);
  }
}
