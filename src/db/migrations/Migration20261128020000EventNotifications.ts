import { Migration } from '@mikro-orm/migrations';

/**
 * Every process hears of each committed event (DESIGN §11, live `contentEvents`): a row inserted into
 * the outbox notifies `event_committed` with its id and repository. NOTIFY is transactional, so the
 * notification leaves at commit and never for a change that rolled back; the listener reads the row.
 */
export class Migration20261128020000EventNotifications extends Migration {
  override up(): void {
    this.addSql(`
      create function event_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('event_committed', json_build_object('id', new.id::text, 'repositoryId', new.repository_id)::text);
        return null;
      end $$;`);
    this.addSql(`create trigger event_notify after insert on event for each row execute function event_notify();`);
  }
}
