import { Migration } from '@mikro-orm/migrations';

/** Repository statistics name the last modification: an index answers it without sorting every entry. */
export class Migration20261122260001StatisticsIndex extends Migration {
  override up(): void {
    this.addSql(`create index entry_last_modified_idx on entry (repository_id, last_modified_at desc) where is_latest;`);
  }
}
