import { Migration } from '@mikro-orm/migrations';

/**
 * Jobs take turns between users, can be cancelled, and some run one at a time (issue 30,
 * docs/conversion.md "Turns, bounds and cancellation"):
 * - `service_job.owner`: whose turn a job takes — its client, or for a text extraction the uploader of
 *   its texts (`text_extraction_queue.uploader`: extraction jobs are per uploader);
 * - `job_turn`: when each owner's last job of a kind started; a free slot goes to the pending job whose
 *   owner's turn is the oldest;
 * - `service_job.exclusive_key`: jobs of one key (a repository's reindex, its deep check) are pending or
 *   running one at a time — a second submission answers the first;
 * - `resource_text_failure`: resources whose extraction failed for reasons of their own (a bomb, the
 *   deadline, a corrupt file): a reindex passes them over unless forced.
 */
export class Migration20261124010000JobTurns extends Migration {
  override up(): void {
    this.addSql(`alter table service_job add column owner text, add column exclusive_key text;`);
    this.addSql(`update service_job set owner = client_username;`);
    this.addSql(`alter table service_job alter column owner set not null;`);
    // the claim's candidates, the per-user bound of queued jobs, a run resumed by its queue job
    this.addSql(`create index service_job_pending_idx on service_job (job_name, priority desc, created_at) where state = 'pending';`);
    this.addSql(`create index service_job_client_pending_idx on service_job (client_username) where state = 'pending';`);
    this.addSql(`create index service_job_queue_job_idx on service_job (queue_job_id) where state = 'running';`);
    // reindexes and deep checks active side by side before: the oldest of each repository is kept
    this.addSql(`
      update service_job j set state = 'cancelled', end_timestamp = now(), last_status_update = now(),
             error_message = 'cancelled: another job of this kind was active in the repository (one at a time since issue 30)'
       where j.job_name in ('reindexText', 'deepCheck') and j.state in ('pending', 'running')
         and exists (select 1 from service_job o where o.repository_id = j.repository_id and o.job_name = j.job_name
                       and o.state in ('pending', 'running') and (o.created_at, o.id) < (j.created_at, j.id));`);
    this.addSql(`update service_job set exclusive_key = job_name || ':' || repository_id where job_name in ('reindexText', 'deepCheck');`);
    this.addSql(`create unique index service_job_exclusive_idx on service_job (exclusive_key) where state in ('pending', 'running');`);
    this.addSql(`create table job_turn (job_name text not null, owner text not null, last_turn_at timestamptz not null, primary key (job_name, owner));`);
    // a row queued by a process of the version before (a rolling upgrade) is the service's: its sweep submits a job for it
    this.addSql(`alter table text_extraction_queue add column uploader text not null default '(service)';`);
    this.addSql(`update text_extraction_queue q set uploader = r.creator from resource r where r.id = q.resource_id;`);
    this.addSql(`
      create table resource_text_failure (
        resource_id text primary key references resource(id) on delete cascade,
        repository_id text not null,
        reason_code text not null,
        message text not null,
        failed_at timestamptz not null default now()
      );`);
  }
}
