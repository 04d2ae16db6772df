import { Migration } from '@mikro-orm/migrations';

/**
 * What the previews' sweep reads (src/modules/conversion/thumbnails.ts, `submitLostThumbnails`): the
 * PDF and image resources of the last hour by their creation time, and the thumbnail jobs by theirs,
 * so that a sweep costs what the last hour's previewable uploads cost, at any size of the repository.
 */
export class Migration20261128154000PreviewSweep extends Migration {
  override up(): void {
    this.addSql(`create index resource_previewable_created_idx on resource (created_at) where mime_type = 'application/pdf' or mime_type like 'image/%';`);
    this.addSql(`create index service_job_thumbnail_created_idx on service_job (created_at) where job_name = 'thumbnail';`);
  }

  override down(): void {
    this.addSql(`drop index service_job_thumbnail_created_idx;`);
    this.addSql(`drop index resource_previewable_created_idx;`);
  }
}
