import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (DESIGN §11, docs/events.md "Webhooks"): an administrator's registrations, and one delivery
 * row per event and matching active webhook, inserted by the outbox's trigger in the change's own
 * transaction: a committed change has its deliveries queued, a rolled-back one none. Workers take due
 * rows under a lease (a killed worker's lease runs out and another takes the row again: at least once)
 * and delete them once delivered; a row waits while an earlier one of its webhook and entry is queued
 * (in order per entry).
 *
 * The secret is kept as given: signing needs it. `repository` is a name (null: every repository, and
 * the events that belong to none, such as logins).
 */
export class Migration20261128030000Webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook (
        id text primary key,
        url text not null,
        events text[] not null,
        repository text,
        secret text not null,
        state text not null default 'active' check (state in ('active', 'failing')),
        last_error text,
        failing_since timestamptz,
        created_at timestamptz not null default now(),
        created_by text not null
      );`);
    this.addSql(`
      create table webhook_delivery (
        id bigint generated always as identity primary key,
        webhook_id text not null references webhook (id) on delete cascade,
        event_id bigint not null,
        -- the entry the event is about ('' for none): deliveries of one key go out one at a time, in order
        ordering_key text not null,
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        leased_until timestamptz,
        first_failure_at timestamptz,
        last_error text
      );`);
    this.addSql(`create index webhook_delivery_due_idx on webhook_delivery (next_attempt_at);`);
    this.addSql(`create index webhook_delivery_order_idx on webhook_delivery (webhook_id, ordering_key, id);`);
    this.addSql(`
      create function event_fan_out_webhooks() returns trigger language plpgsql as $$
      begin
        insert into webhook_delivery (webhook_id, event_id, ordering_key)
          select w.id, new.id, coalesce(new.entry_id, '')
            from webhook w
           where w.state = 'active' and new.type = any (w.events) and (w.repository is null or w.repository = new.repository);
        return null;
      end $$;`);
    this.addSql(`create trigger event_fan_out_webhooks after insert on event for each row execute function event_fan_out_webhooks();`);
  }
}
