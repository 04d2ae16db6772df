import { Migration } from '@mikro-orm/migrations';

/**
 * Groups of users, the `group:<name>` principals of access control lists (DESIGN §10). A group name
 * follows the user name rule (unique whatever its case, kept as first spelled) and is never
 * `EVERYONE`, the principal of every signed-in user. A membership goes with its group or its user.
 * Memberships are read by user on every session lookup (the caller's groups), and by group when
 * groups are listed or deleted: an index for each direction.
 */
export class Migration20261127010000Groups extends Migration {
  override up(): void {
    this.addSql(`
      create table user_group (
        name text primary key check (upper(name) <> 'EVERYONE'),
        created_at timestamptz not null default now(),
        created_by text not null
      );`);
    this.addSql(`create unique index user_group_name_lower_unique on user_group (lower(name));`);
    this.addSql(`
      create table group_member (
        group_name text not null references user_group(name) on delete cascade,
        user_name text not null references app_user(user_name) on delete cascade,
        primary key (group_name, user_name)
      );`);
    this.addSql(`create index group_member_user_idx on group_member (user_name, group_name);`);
  }
}
