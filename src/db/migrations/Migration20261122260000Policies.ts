import { Migration } from '@mikro-orm/migrations';

/**
 * Administration (DESIGN §8): the content type registry (a tree: a type names its parent), policies
 * (kind and fields as JSON) and their assignment to folders. An assignment goes with its folder or its
 * policy.
 */
export class Migration20261122260000Policies extends Migration {
  override up(): void {
    this.addSql(`
      create table content_type (
        name text primary key,
        parent_name text references content_type(name),
        created_at timestamptz not null default now()
      );`);
    this.addSql(`
      create table policy (
        id text primary key,
        technical_name text not null unique,
        name text not null,
        kind text not null check (kind in ('DEFAULT_TYPE', 'INHERITANCE', 'TYPE_RESTRICTION')),
        fields jsonb not null,
        created_at timestamptz not null,
        created_by text not null
      );`);
    this.addSql(`
      create table policy_assignment (
        policy_id text not null references policy(id) on delete cascade,
        folder_id text not null references entry(id) on delete cascade,
        repository_id text not null,
        primary key (folder_id, policy_id)
      );`);
    this.addSql(`create index policy_assignment_policy on policy_assignment (policy_id);`);
  }
}
