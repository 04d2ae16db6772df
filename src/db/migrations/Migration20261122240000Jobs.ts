import { Migration } from '@mikro-orm/migrations';

/**
 * Background jobs (DESIGN §7): the job record the status endpoints read (`service_job`, keyed by the job
 * id a client holds), the queue table of Agenda's Postgres backend (created here, not by the library at
 * connect time, so that processes starting together do not race on it), and the representations of
 * content versions in the cache store.
 */
export class Migration20261122240000Jobs extends Migration {
  override up(): void {
    this.addSql(`
      create table service_job (
        id text primary key,
        repository_id text not null references repository(id) on delete cascade,
        job_name text not null,
        conversion_type text not null,
        queue_job_id text,
        client_session_id text,
        client_username text not null,
        client_roles text[] not null default '{}',
        content_ids text[] not null default '{}',
        input_filenames text[] not null default '{}',
        display_filename text,
        target_name text,
        result_action text,
        state text not null default 'pending' check (state in ('pending', 'running', 'Done', 'panic', 'cancelled')),
        percentage real not null default 0,
        priority integer not null default 0,
        tries integer not null default 0,
        revivable boolean not null default true,
        created_at timestamptz not null default now(),
        start_timestamp timestamptz,
        end_timestamp timestamptz,
        last_status_update timestamptz not null default now(),
        worker_name text,
        error_message text,
        reason_code text,
        stack_trace text,
        partition text not null,
        request_selective_information text,
        request_type_short_name text,
        request_type_signature text,
        serialized_request jsonb not null default '{}'::jsonb,
        serialized_lowlevel_request jsonb,
        serialized_result jsonb
      );`);
    this.addSql(`create index service_job_list_idx on service_job (repository_id, state, created_at desc);`);
    this.addSql(`create index service_job_all_idx on service_job (repository_id, created_at desc);`);
    // the table of @agendajs/postgres-backend 3.0.6 (its schema.js), as the library would create it
    this.addSql(`
      create table agenda_jobs (
        id uuid primary key default gen_random_uuid(),
        name varchar(255) not null,
        priority integer not null default 0,
        next_run_at timestamptz,
        type varchar(10) not null default 'normal' check (type in ('normal', 'single')),
        locked_at timestamptz,
        last_finished_at timestamptz,
        failed_at timestamptz,
        fail_count integer default null,
        fail_reason text,
        repeat_timezone varchar(100),
        last_run_at timestamptz,
        repeat_interval varchar(255),
        data jsonb default '{}'::jsonb,
        repeat_at varchar(255),
        disabled boolean default false,
        progress real,
        fork boolean default false,
        last_modified_by varchar(255),
        debounce_started_at timestamptz,
        start_date timestamptz,
        end_date timestamptz,
        skip_days jsonb,
        created_at timestamptz default now(),
        updated_at timestamptz default now()
      );`);
    this.addSql(`create index agenda_jobs_find_and_lock_idx on agenda_jobs (name, next_run_at, priority desc, locked_at, disabled) where disabled = false;`);
    this.addSql(`create unique index agenda_jobs_single_job_idx on agenda_jobs (name) where type = 'single';`);
    this.addSql(`create index agenda_jobs_locked_at_idx on agenda_jobs (locked_at) where locked_at is not null;`);
    this.addSql(`create index agenda_jobs_next_run_at_idx on agenda_jobs (next_run_at) where next_run_at is not null;`);
    this.addSql(`
      create table representation (
        id text primary key,
        repository_id text not null references repository(id) on delete cascade,
        source_entry_id text not null references entry(id) on delete cascade,
        format text not null,
        page integer not null,
        page_count integer not null,
        status text not null,
        mime_type text not null,
        file_size bigint not null,
        width integer not null,
        height integer not null,
        storage_path text not null,
        job_id text,
        created_at timestamptz not null default now(),
        unique (source_entry_id, format, page)
      );`);
  }
}
