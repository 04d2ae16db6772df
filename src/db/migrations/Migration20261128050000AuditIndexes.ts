import { Migration } from '@mikro-orm/migrations';

/**
 * The audit trail's filters within a repository (GET C/audit) read one index each, and their counts
 * are index-only scans: the repository leads each index, and `chronical_id` rides along for the
 * visibility of a caller who is not an administrator (access/policy.ts `visibleEvents`), so only the
 * entries it checks are read besides. Measured by `npm run bench -- audit` (docs/benchmarks.md): with
 * the indexes of Migration20261128010000Events a page by actor or by type of a million events took
 * 100–300 ms, its count reading every matching row.
 */
export class Migration20261128050000AuditIndexes extends Migration {
  override up(): void {
    this.addSql(`drop index event_repository_idx;`);
    this.addSql(`create index event_repository_idx on event (repository_id, id desc) include (chronical_id);`);
    this.addSql(`create index event_repository_actor_idx on event (repository_id, actor, id desc) include (chronical_id);`);
    this.addSql(`create index event_repository_type_idx on event (repository_id, type, id desc) include (chronical_id);`);
    this.addSql(`create index event_repository_at_idx on event (repository_id, at) include (chronical_id);`);
    // the administration trail filters by type (and a user's by its name): both in the index
    this.addSql(`drop index event_type_idx;`);
    this.addSql(`create index event_type_idx on event (type, id desc) include (actor);`);
  }
}
