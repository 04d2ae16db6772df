import { Migration } from '@mikro-orm/migrations';

/**
 * The transactional outbox (DESIGN §11): one row per change, inserted by the change's own transaction,
 * so a change that rolls back leaves no event and no committed change lacks one. The audit trail reads
 * it, live subscriptions and webhook deliveries start from it.
 *
 * Rows outlive what they name: no foreign keys (a purged entry, a deleted repository or user keep their
 * history until the retention job removes it). `id` orders the trail (newest first); each audit filter
 * has an index that ends in `id desc`, so a filtered page reads only its rows; `at` serves retention.
 */
export class Migration20261128010000Events extends Migration {
  override up(): void {
    this.addSql(`
      create table event (
        id bigint generated always as identity primary key,
        at timestamptz not null default now(),
        repository_id text,
        repository text,
        type text not null,
        entry_id text,
        chronical_id text,
        actor text,
        details jsonb not null default '{}'::jsonb
      );`);
    this.addSql(`create index event_repository_idx on event (repository_id, id desc);`);
    this.addSql(`create index event_entry_idx on event (entry_id, id desc) where entry_id is not null;`);
    this.addSql(`create index event_chronicle_idx on event (chronical_id, id desc) where chronical_id is not null;`);
    this.addSql(`create index event_actor_idx on event (actor, id desc);`);
    this.addSql(`create index event_type_idx on event (type, id desc);`);
    this.addSql(`create index event_at_idx on event (at);`);
  }
}
