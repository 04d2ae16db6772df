import { Migration } from '@mikro-orm/migrations';

/** Repositories, users, sessions, resources and entries (folders and versioned contents). */
export class Migration20261122000001Initial extends Migration {
  override up(): void {
    this.addSql(`
      create table repository (
        id text primary key,
        name text not null unique,
        technical_name text not null unique,
        type text not null default 'STANDARD',
        full_text_enabled boolean not null default true,
        limits jsonb not null default '{}'::jsonb,
        created_at timestamptz not null default now(),
        created_by text not null,
        modified_at timestamptz not null default now(),
        modified_by text not null
      );`);
    this.addSql(`
      create table app_user (
        user_name text primary key,
        password_hash text not null,
        roles text[] not null default '{}',
        created_at timestamptz not null default now()
      );`);
    this.addSql(`
      create table user_session (
        token_hash text primary key,
        user_name text not null references app_user(user_name) on delete cascade,
        created_at timestamptz not null default now(),
        last_seen_at timestamptz not null default now(),
        expires_at timestamptz not null
      );`);
    this.addSql(`create index user_session_user_idx on user_session (user_name);`);
    this.addSql(`
      create table resource (
        id text primary key,
        repository_id text not null references repository(id) on delete cascade,
        name text not null,
        mime_type text not null,
        file_size bigint not null,
        md5 text not null,
        storage_path text not null,
        state text not null default 'pending' check (state in ('pending', 'ready')),
        created_at timestamptz not null default now(),
        creator text not null
      );`);
    this.addSql(`create index resource_pending_idx on resource (created_at) where state = 'pending';`);
    this.addSql(`
      create table entry (
        id text primary key,
        repository_id text not null references repository(id) on delete cascade,
        entry_type text not null check (entry_type in ('CONTENT', 'FOLDER')),
        chronical_id text not null,
        name text not null,
        active boolean not null default true,
        owner text not null,
        created_at timestamptz not null default now(),
        created_by text not null,
        last_modified_at timestamptz not null default now(),
        last_modified_by text not null,
        locked_at timestamptz,
        locked_by text,
        version text,
        version_major integer,
        version_minor integer,
        version_status text check (version_status in ('WORKING_COPY', 'CURRENT')),
        is_latest boolean not null default true,
        parent_id text references entry(id) on delete cascade,
        predecessor_id text references entry(id) on delete set null,
        resource_id text references resource(id),
        type_name text,
        properties jsonb not null default '{}'::jsonb,
        tags text[] not null default '{}',
        comment text
      );`);
    // a name is unique among the active latest entries of one folder (or of the root)
    this.addSql(`
      create unique index entry_name_unique on entry (repository_id, coalesce(parent_id, ''), name)
        where active and is_latest and version_status is distinct from 'WORKING_COPY';`);
    // one latest version and one working copy per chronicle
    this.addSql(`create unique index entry_latest_unique on entry (chronical_id) where is_latest and version_status is distinct from 'WORKING_COPY';`);
    this.addSql(`create unique index entry_working_copy_unique on entry (chronical_id) where version_status = 'WORKING_COPY';`);
    this.addSql(`create index entry_chronicle_idx on entry (chronical_id);`);
    this.addSql(`create index entry_parent_idx on entry (repository_id, parent_id) where is_latest;`);
    this.addSql(`create index entry_repository_latest_idx on entry (repository_id, entry_type, created_at) where is_latest;`);
    this.addSql(`create index entry_resource_idx on entry (resource_id);`);
    this.addSql(`create index entry_tags_idx on entry using gin (tags);`);
  }
}
