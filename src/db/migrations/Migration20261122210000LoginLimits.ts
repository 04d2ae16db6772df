import { Migration } from '@mikro-orm/migrations';

/**
 * Login attempts counted in the database (shared by every process): the table in the layout
 * rate-limiter-flexible's Postgres store expects (its `tableCreated: true`, so it never creates one).
 * `expire` is milliseconds since the epoch.
 */
export class Migration20261122210000LoginLimits extends Migration {
  override up(): void {
    this.addSql(`
      create table login_attempt (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      );`);
  }
}
