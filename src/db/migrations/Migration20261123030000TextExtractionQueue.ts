import { Migration } from '@mikro-orm/migrations';

/**
 * The resources waiting for their text (docs/search.md, extraction): a row is written by the statement
 * that claims an upload for a new version (in its transaction, no extra round trip), so an upload never
 * loses its extraction, whatever happens to the process after it answered. Extraction jobs take rows in
 * batches (`job_id` = the job that took them; a rerun of that job after a worker's death takes them
 * again) and delete them with the batch's texts written. No foreign key to `resource`: deleting a
 * content must not wait for a worker holding the row; a row whose resource is gone is simply dropped.
 */
export class Migration20261123030000TextExtractionQueue extends Migration {
  override up(): void {
    this.addSql(`
      create table text_extraction_queue (
        resource_id text primary key,
        repository_id text not null,
        queued_at timestamptz not null default now(),
        job_id text
      );`);
    this.addSql(`create index text_extraction_queue_repository_idx on text_extraction_queue (repository_id, queued_at);`);
    // extractions queued before, one job each: their resources wait in the queue now, taken by those jobs
    this.addSql(`
      insert into text_extraction_queue (resource_id, repository_id, queued_at)
        select distinct on (j.serialized_request->>'resourceId') j.serialized_request->>'resourceId', j.repository_id, j.created_at
          from service_job j
         where j.job_name = 'extractText' and j.state in ('pending', 'running') and j.serialized_request->>'resourceId' is not null
         order by j.serialized_request->>'resourceId', j.created_at
      on conflict do nothing;`);
  }
}
