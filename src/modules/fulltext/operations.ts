import type { EntityManager } from '@mikro-orm/postgresql';
import { accessDenied, conflict } from '../../errors.js';
import { isAdmin } from '../auth/principal.js';
import type { EntryScope } from '../entries/scope.js';
import { jobPriority } from '../jobs/queue.js';
import type { JobRecord } from '../jobs/records.js';

/** The job that extracts the text of one resource (its id in `serializedRequest.resourceId`). */
export const extractTextJobName = 'extractText';
/** The job that extracts the text of every current content of a repository that has none yet. */
export const reindexJobName = 'reindexText';

export function requireFullText(scope: EntryScope): void {
  if (!scope.repository.fullTextEnabled) throw conflict(`full text is disabled for repository '${scope.repository.name}'`);
}

const jobOf = (scope: EntryScope, fields: { jobName: string; conversionType: string; contentIds: string[]; inputFilenames: string[]; serializedRequest: Record<string, unknown> }) => ({
  ...fields,
  repositoryId: scope.repository.id,
  clientUsername: scope.principal.userName,
  clientRoles: scope.principal.roles,
  priority: jobPriority.low,
  partition: `access.svc.content.${scope.repository.name}`,
});

/**
 * Queues the extraction of a new version's text (after an upload, a replaced resource, a check-in),
 * unless full text is disabled. The upload does not wait for it. The job is recorded outside the
 * caller's transaction (a fork of the entity manager): a worker must find its record when it starts.
 */
export async function requestTextExtraction(scope: EntryScope, entry: { id: string; name: string; resourceId?: string | null }): Promise<void> {
  if (!scope.repository.fullTextEnabled || !entry.resourceId) return;
  await scope.services.jobs.submit(scope.services.orm.em.fork() as EntityManager, {
    ...jobOf(scope, {
      jobName: extractTextJobName,
      conversionType: 'TEXT_EXTRACTION',
      contentIds: [entry.id],
      inputFilenames: [entry.name],
      serializedRequest: { resourceId: entry.resourceId },
    }),
    requestTypeShortName: 'ExtractTextRequest',
  });
}

/** POST C/reindex (administrators): a job extracting the text of every current content that has none yet. */
export async function startReindex(scope: EntryScope): Promise<JobRecord> {
  if (!isAdmin(scope.principal)) throw accessDenied('only administrators reindex a repository');
  requireFullText(scope);
  return scope.services.jobs.submit(scope.em, {
    ...jobOf(scope, { jobName: reindexJobName, conversionType: 'REINDEX', contentIds: [], inputFilenames: [], serializedRequest: {} }),
    requestTypeShortName: 'ReindexRequest',
    requestTypeSignature: 'POST /v1/reindex',
  });
}

/** Stores a resource's text whole, in one statement (a rerun overwrites it): a worker killed midway leaves no partial text. False when the resource is gone. */
export async function saveResourceText(em: EntityManager, resourceId: string, text: string, truncated: boolean): Promise<boolean> {
  const rows = await em.execute(
    `insert into resource_text (resource_id, repository_id, text, truncated)
       select id, repository_id, ?, ? from resource where id = ?
     on conflict (resource_id) do update set text = excluded.text, truncated = excluded.truncated, extracted_at = now()
     returning resource_id`,
    [text, truncated, resourceId],
  );
  return rows.length > 0;
}

export interface ResourceToIndex {
  id: string;
  repositoryId: string;
  name: string;
  mimeType: string;
  fileSize: number;
  storagePath: string;
}

const resourceColumns = `r.id, r.repository_id as "repositoryId", r.name, r.mime_type as "mimeType", r.file_size::float8 as "fileSize", r.storage_path as "storagePath"`;

export async function findResourceToIndex(em: EntityManager, resourceId: string): Promise<ResourceToIndex | undefined> {
  const [row] = await em.execute<ResourceToIndex[]>(`select ${resourceColumns} from resource r where r.id = ?`, [resourceId]);
  return row;
}

/** The next resources of a repository's current contents without text (in id order after `afterId`): what a reindex works through. */
export async function resourcesWithoutText(em: EntityManager, repositoryId: string, afterId: string, limit: number): Promise<ResourceToIndex[]> {
  return em.execute<ResourceToIndex[]>(
    `select ${resourceColumns} from resource r
      where r.repository_id = ? and r.id > ? and r.state <> 'pending'
        and exists (select 1 from entry e where e.resource_id = r.id and e.is_latest)
        and not exists (select 1 from resource_text t where t.resource_id = r.id)
      order by r.id limit ?`,
    [repositoryId, afterId, limit],
  );
}
