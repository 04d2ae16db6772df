import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import { convertJobName } from '../conversion/operations.js';
import { partitionOf, type RepositoryRecord } from './operations.js';

type Range = { min: string | null; max: string | null };

/**
 * Spec "Repository statistics" over the latest version of each chronicle (a working copy is not one
 * more content; never by walking files), read from tallies that every change keeps in its own
 * transaction (Migration20261128080000StatisticsTallies): the cost is the same at any repository size.
 * Minima and maxima are one index probe each. `residuals` counts contents without a resource or with an
 * unknown size; sizes of 1 GiB and more count in `size_1GB_10GB` (the spec has no larger bucket).
 */
export async function repositoryStatistics(em: EntityManager, repository: RepositoryRecord) {
  const started = performance.now();
  const connection = em.getConnection();
  const [[content], [contentRange], [last], cache, [representationRange], [sourceRange], [noticed]] = await Promise.all([
    connection.execute<Record<string, string | null>[]>(
      `select ${['contents', 'folders', 'active_contents', 'active_folders', 'sized', 'size', 'residuals', 'b0', 'b1', 'b2', 'b3', 'b4']
        .map((column) => `coalesce(sum(${column}), 0) as ${column}`)
        .join(', ')} from entry_tally where repository_id = ?`,
      [repository.id],
    ),
    connection.execute<Range[]>(
      `select min(resource_file_size) as min, max(resource_file_size) as max from entry
        where repository_id = ? and is_latest and version_status is distinct from 'WORKING_COPY' and entry_type = 'CONTENT'`,
      [repository.id],
    ),
    connection.execute<{ last_modified_at: Date | null; last_modified_by: string | null }[]>(
      `select last_modified_at, last_modified_by from entry where repository_id = ? and is_latest order by last_modified_at desc limit 1`,
      [repository.id],
    ),
    // one row per representation status, and the sources' row (status null)
    connection.execute<{ status: string | null; representations: string; size: string; sources: string; source_sized: string; source_size: string }[]>(
      `select status, sum(representations) as representations, sum(size) as size, sum(sources) as sources, sum(source_sized) as source_sized,
              sum(source_size) as source_size
         from representation_tally where repository_id = ? group by status`,
      [repository.id],
    ),
    connection.execute<Range[]>('select min(file_size) as min, max(file_size) as max from representation where repository_id = ?', [repository.id]),
    connection.execute<Range[]>('select min(size) as min, max(size) as max from representation_source where repository_id = ?', [repository.id]),
    // what the notifications below count besides the residuals: failed conversions, texts waiting for extraction
    connection.execute<{ failed: string; waiting_for_text: string }[]>(
      `select count(*) as failed, (select count(*) from text_extraction_queue where repository_id = ?) as waiting_for_text
         from service_job where partition = ? and state = 'panic' and job_name = ?`,
      [repository.id, partitionOf(repository.id), convertJobName],
    ),
  ]);
  const n = (value: string | null | undefined) => (value === null || value === undefined ? 0 : Number(value));
  const average = (total: number, count: number) => (count > 0 ? total / count : 0);
  const statuses = cache.filter((row) => row.status !== null && n(row.representations) > 0);
  const representations = statuses.reduce((total, row) => total + n(row.representations), 0);
  const representationsSize = statuses.reduce((total, row) => total + n(row.size), 0);
  const sources = cache.find((row) => row.status === null);
  const residuals = n(content!.residuals);
  const failed = n(noticed!.failed);
  const waitingForText = n(noticed!.waiting_for_text);
  const notifications = [
    ...(residuals > 0 ? [{ command: `${residuals} content(s) have no resource or an unknown size: replace their resource or delete them`, executeManually: true }] : []),
    ...(failed > 0 ? [{ command: `${failed} conversion job(s) failed: see GET C/jobs?state=panic`, executeManually: true }] : []),
    // queued texts are taken by the extraction jobs (and a periodic sweep): nothing to do by hand
    ...(waitingForText > 0 ? [{ command: `${waitingForText} content(s) wait for their text to be extracted for full-text search`, executeManually: false }] : []),
  ];
  return {
    name: repository.name,
    repositoryTechnicalName: repository.technicalName,
    type: repository.type,
    createdAt: repository.createdAt,
    createdBy: repository.createdBy,
    modifiedAt: repository.modifiedAt,
    modifiedBy: repository.modifiedBy,
    executionDate: new Date(),
    duration: Math.round(performance.now() - started),
    notifications,
    contentStatistics: {
      numberOfContents: n(content!.contents),
      numberOfFolders: n(content!.folders),
      numberOfActiveContents: n(content!.active_contents),
      numberOfActiveFolders: n(content!.active_folders),
      numberOfDeactivatedContents: n(content!.contents) - n(content!.active_contents),
      numberOfDeactivatedFolders: n(content!.folders) - n(content!.active_folders),
      size: n(content!.size),
      minSize: n(contentRange!.min),
      maxSize: n(contentRange!.max),
      averageSize: average(n(content!.size), n(content!.sized)),
      lastModifiedAt: last?.last_modified_at ? new Date(last.last_modified_at) : null,
      lastModifiedBy: last?.last_modified_by ?? null,
      sizeDistribution: {
        residuals,
        size_0_1MB: n(content!.b0),
        size_1MB_10MB: n(content!.b1),
        size_10MB_100MB: n(content!.b2),
        size_100MB_1GB: n(content!.b3),
        size_1GB_10GB: n(content!.b4),
      },
    },
    cacheStatistics: {
      numberOfDocuments: n(sources?.sources),
      numberOfPages: representations,
      numberOfRepresentations: representations,
      numberOfSourceRepresentations: n(sources?.sources),
      representationsSize,
      representationsMinSize: n(representationRange!.min),
      representationsMaxSize: n(representationRange!.max),
      representationsAverageSize: average(representationsSize, representations),
      sourceRepresentationsSize: n(sources?.source_size),
      sourceRepresentationsMinSize: n(sourceRange!.min),
      sourceRepresentationsMaxSize: n(sourceRange!.max),
      sourceRepresentationsAverageSize: average(n(sources?.source_size), n(sources?.source_sized)),
      representationsStatus: Object.fromEntries(statuses.map((row) => [row.status, n(row.representations)])),
    },
  };
}

export type RepositoryStatistics = Awaited<ReturnType<typeof repositoryStatistics>>;
