import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBounded } from '../../db/statement-timeout.js';
import { conflict } from '../../errors.js';
import { requireRole } from '../access/roles.js';
import type { Services } from '../../context.js';
import type { EntryScope } from '../entries/scope.js';
import { jobPriority } from '../jobs/queue.js';
import type { JobRecord } from '../jobs/records.js';
import { partitionOf } from '../repositories/operations.js';

/**
 * The job that extracts the texts one uploader left waiting in a repository's queue
 * (`text_extraction_queue`), in batches; its record lists the contents it took (`contentIds`). Its
 * owner is the uploader: the extraction jobs of several uploaders take turns (docs/search.md).
 */
export const extractTextJobName = 'extractText';
/** The job that extracts the text of every current content of a repository that has none yet. */
export const reindexJobName = 'reindexText';
/**
 * Uploads of one process within this time share one extraction job (JobQueue.submitCoalesced): at
 * 300 uploads/s a job per upload cost more than the extraction itself, and each job still costs
 * about 18 statements of its own (record, Agenda lock and state, batches): a second's uploads share
 * one (docs/benchmarks.md, ingest). The first upload after a quiet second is submitted at once.
 */
export const extractionWindowMs = 1000;
/** Who an extraction job runs for: the service, not a user (its contents are many users'; no user name has parentheses). */
export const extractionClient = '(service)';

export function requireFullText(scope: EntryScope): void {
  if (!scope.repository.fullTextEnabled) throw conflict(`full text is disabled for repository '${scope.repository.name}'`);
}

type JobFields = { jobName: string; conversionType: string; clientUsername: string; clientRoles: string[]; owner?: string; serializedRequest: Record<string, unknown> };

const jobOf = (repositoryId: string, fields: JobFields) => ({
  ...fields,
  repositoryId,
  contentIds: [],
  inputFilenames: [],
  priority: jobPriority.low,
  partition: partitionOf(repositoryId),
});

/**
 * Asks for the extraction of the texts the caller queued in the repository (without waiting: an upload
 * never waits for its text). The claim of each new version's upload has queued its resource in the
 * version's own statement (`claimExpressions`), so this is only the wake-up call: when it is lost
 * (the process died first), a worker's sweep submits the job instead (`queuedWithoutJob`).
 */
export function requestTextExtraction(scope: EntryScope): void {
  if (scope.repository.fullTextEnabled) submitExtraction(scope.services, scope.repository.id, scope.principal.userName);
}

/** Submits an extraction job for what `uploader` queued in the repository, coalesced with the other requests of this process. */
export function submitExtraction(services: Services, repositoryId: string, uploader: string): void {
  services.jobs.submitCoalesced(`${extractTextJobName}:${repositoryId}:${uploader}`, extractionWindowMs, () => ({
    ...jobOf(repositoryId, {
      jobName: extractTextJobName,
      conversionType: 'TEXT_EXTRACTION',
      clientUsername: extractionClient,
      clientRoles: [],
      owner: uploader,
      serializedRequest: {},
    }),
    requestTypeShortName: 'ExtractTextRequest',
  }));
}

/**
 * POST C/reindex (administrators): a job extracting the text of every current content that has none
 * yet — without the resources whose extraction failed for reasons of their own unless `force`. One per
 * repository at a time: while one is pending or running, that one is answered (its `force` as it was).
 */
export async function startReindex(scope: EntryScope, { force }: { force: boolean }): Promise<JobRecord> {
  requireRole(scope.principal, 'ADMIN', 'reindexing a repository');
  requireFullText(scope);
  const { record } = await scope.services.jobs.submitExclusive(scope.em, {
    ...jobOf(scope.repository.id, {
      jobName: reindexJobName,
      conversionType: 'REINDEX',
      clientUsername: scope.principal.userName,
      clientRoles: scope.principal.roles,
      serializedRequest: { force },
    }),
    exclusiveKey: `${reindexJobName}:${scope.repository.id}`,
    requestTypeShortName: 'ReindexRequest',
    requestTypeSignature: 'POST /v1/reindex',
    requestSelectiveInformation: `force=${force}`,
  });
  return record;
}

/** A resource's text as stored: whole (a rerun overwrites it). */
export interface ResourceText {
  resourceId: string;
  text: string;
  truncated: boolean;
  /** what was left out and why: a kind not read, a page whose OCR was over its bound */
  notes: string[];
}

/**
 * Stores texts, each whole, in one statement (a rerun overwrites them): a worker killed midway leaves
 * no partial text. Answers the ids stored (a resource deleted meanwhile is left out). In a job the
 * statement is bounded by JOB_STATEMENT_TIMEOUT_MS (`executeBounded`): its tsvector is computed here.
 * The job's `em` is outside a transaction: the statement commits, and then the words of the entries
 * on those resources are settled (`settleEntryWords`).
 */
export async function saveResourceTexts(em: EntityManager, texts: ResourceText[]): Promise<string[]> {
  if (texts.length === 0) return [];
  const rows = await executeBounded<{ resource_id: string }>(
    em,
    `insert into resource_text (resource_id, repository_id, text, truncated, notes)
       select r.id, r.repository_id, t.text, t.truncated, array(select jsonb_array_elements_text(t.notes))
         from jsonb_to_recordset(?::jsonb) as t("resourceId" text, text text, truncated boolean, notes jsonb) join resource r on r.id = t."resourceId"
     on conflict (resource_id) do update set text = excluded.text, truncated = excluded.truncated, notes = excluded.notes, extracted_at = now()
     returning resource_id`,
    [JSON.stringify(texts)],
  );
  const stored = rows.map((row) => row.resource_id);
  await settleEntryWords(em, stored);
  return stored;
}

/**
 * One statement: the words of the visible entries on the resources (`$1`, a JSON array) made again
 * where they differ from their name and committed text, and the ids of the entries it left (`busy`).
 * With `$2` false it waits for nothing: it settles the entries that no running transaction holds, nor
 * their words rows, locking both for the statement (`skip locked`: a writer holding an entry's row may
 * hold its words row too; one that comes later waits, then reads the committed text), and leaves the
 * rest. With `$2` true it locks nothing and settles every entry; a words row changed meanwhile (its `xmin`
 * no longer the one read) is then left to its writer: the update would write it from the entry row as
 * read before.
 */
const settleStatement = `
  with on_resources as materialized (
    select e.id, e.name, e.resource_id, exists (select 1 from entry_visible_words w where w.entry_id = e.id) as shown
      from entry e where e.resource_id in (select jsonb_array_elements_text(?::jsonb))),
  free as materialized (
    select e.id from entry e where not ?::boolean and e.id in (select id from on_resources) for share of e skip locked),
  free_words as materialized (
    select w.entry_id from entry_visible_words w where w.entry_id in (select id from free) for update of w skip locked),
  entries as (
    select r.id, r.name, r.resource_id, f.id is null or (r.shown and fw.entry_id is null) as busy
      from on_resources r left join free f on f.id = r.id left join free_words fw on fw.entry_id = r.id),
  rewritten as (
    update entry_visible_words w set words = t.words
      from entry_visible_words seen, entries e, lateral (select entry_words(e.name, e.resource_id) as words) t
     where (?::boolean or not e.busy) and seen.entry_id = e.id and w.entry_id = e.id and w.xmin = seen.xmin and seen.words is distinct from t.words)
  select coalesce(array_agg(id) filter (where busy), '{}') as busy from entries`;

/**
 * After texts are committed, the words of the entries on their resources hold them (docs/search.md,
 * "An entry shown while its text is stored"). An entry's words are written by its own statement while
 * it holds the entry's row; one written while the text's statement ran may have read the resource
 * without the text, and the text's trigger did not see that entry, not committed yet. So: the words of
 * the entries no one holds are settled, waiting for nothing; then each entry row of the others is locked
 * in turn, alone (no two locks held: no deadlock), which waits for a writer holding it, and the words of
 * them all are settled, holding no entry. A writer that takes an entry's row after that reads the
 * committed text itself.
 */
export async function settleEntryWords(em: EntityManager, resourceIds: string[]): Promise<void> {
  if (resourceIds.length === 0) return;
  const resources = JSON.stringify(resourceIds);
  const settle = async (all: boolean) => (await executeBounded<{ busy: string[] }>(em, settleStatement, [resources, all, all]))[0]?.busy ?? [];
  const busy = await settle(false);
  if (busy.length === 0) return;
  for (const id of busy) await executeBounded(em, `select 1 from entry where id = ? for share`, [id]);
  await settle(true);
}

export interface ResourceToIndex {
  id: string;
  repositoryId: string;
  name: string;
  mimeType: string;
  fileSize: number;
  storagePath: string;
  /** `hasPdfMark` of its first bytes as the upload read them (the queue row's); absent or null: read from the file */
  pdfMark?: boolean | null;
}

const resourceColumns = `r.id, r.repository_id as "repositoryId", r.name, r.mime_type as "mimeType", r.file_size::float8 as "fileSize", r.storage_path as "storagePath"`;

/**
 * Takes the next batch of the repository's queued resources for the extraction job `jobId`: first what
 * it took in an earlier run (a rerun after a worker's death, or after it gave its turn up), then what
 * its owner (the uploader) queued up to its creation that no live job holds (so a job ends while uploads
 * go on: later ones have jobs of their own). Answers the queued ids (with those whose resource is gone)
 * and the resources to read with their contents.
 */
export async function takeQueuedResources(
  em: EntityManager,
  job: { id: string; repositoryId: string; owner: string },
  limit: number,
): Promise<{ queued: string[]; resources: (ResourceToIndex & { contentIds: string[] })[] }> {
  const rows = await em.execute<{ queued: string; id: string | null; contentIds: string[] | null; repositoryId: string; name: string; mimeType: string; fileSize: number; storagePath: string; pdfMark: boolean | null }[]>(
    `with taken as (
       update text_extraction_queue q set job_id = ? where q.resource_id in (
         select w.resource_id from text_extraction_queue w
          where w.repository_id = ? and (w.job_id = ? or (w.uploader = ? and w.queued_at <= (select created_at from service_job where id = ?) and (w.job_id is null or not exists (
            select 1 from service_job j where j.id = w.job_id and j.state in ('pending', 'running')))))
          order by w.job_id is not distinct from ? desc, w.queued_at limit ? for update skip locked)
       returning q.resource_id, q.pdf_mark),
     listed as (
       select t.resource_id, array_agg(e.id order by e.id) as content_ids from taken t join entry e on e.resource_id = t.resource_id group by t.resource_id)
     select t.resource_id as queued, ${resourceColumns}, t.pdf_mark as "pdfMark", l.content_ids as "contentIds"
       from taken t left join resource r on r.id = t.resource_id left join listed l on l.resource_id = t.resource_id`,
    [job.id, job.repositoryId, job.id, job.owner, job.id, job.id, limit],
  );
  return {
    queued: rows.map((row) => row.queued),
    resources: rows.filter((row) => row.id !== null).map(({ queued: _, contentIds, ...resource }) => ({ ...resource, id: resource.id!, contentIds: contentIds ?? [] })),
  };
}

/** The batch is done (texts stored, failures noted): its rows leave the queue. */
export async function dequeue(em: EntityManager, jobId: string, resourceIds: string[]): Promise<void> {
  await em.execute(`delete from text_extraction_queue where job_id = ? and resource_id in (select jsonb_array_elements_text(?::jsonb))`, [jobId, JSON.stringify(resourceIds)]);
}

/** Drops what was queued in the job's repository up to its creation (full text was switched off: nothing is indexed; a reindex finds them later). */
export async function dropQueued(em: EntityManager, job: { id: string; repositoryId: string }): Promise<number> {
  const rows = await em.execute(
    `delete from text_extraction_queue where repository_id = ? and queued_at <= (select created_at from service_job where id = ?) returning resource_id`,
    [job.repositoryId, job.id],
  );
  return rows.length;
}

/**
 * Repositories and uploaders with texts queued longer than `olderThanMs` that no job will take (none
 * took them, or the one that did has ended, and none of the uploader is waiting to start since): the
 * wake-up call was lost.
 */
export async function queuedWithoutJob(em: EntityManager, olderThanMs: number): Promise<{ repositoryId: string; uploader: string }[]> {
  return em.execute<{ repositoryId: string; uploader: string }[]>(
    `select distinct w.repository_id as "repositoryId", w.uploader from text_extraction_queue w
      where w.queued_at < now() - (? * interval '1 millisecond')
        and (w.job_id is null or not exists (select 1 from service_job j where j.id = w.job_id and j.state in ('pending', 'running')))
        and not exists (
          select 1 from service_job j
           where j.repository_id = w.repository_id and j.job_name = ? and j.owner = w.uploader and j.state = 'pending' and j.created_at >= w.queued_at)`,
    [olderThanMs, extractTextJobName],
  );
}

/**
 * The resources of a repository's current contents without text (parameters: the repository's id and
 * whether to take those whose extraction failed for reasons of their own too): what a reindex works through.
 */
const withoutText = `r.repository_id = ? and r.state <> 'pending'
        and exists (select 1 from entry e where e.resource_id = r.id and e.is_latest)
        and not exists (select 1 from resource_text t where t.resource_id = r.id)
        and (?::boolean or not exists (select 1 from resource_text_failure f where f.resource_id = r.id))`;

/** The next resources without text (in id order after `afterId`). */
export async function resourcesWithoutText(em: EntityManager, repositoryId: string, force: boolean, afterId: string, limit: number): Promise<ResourceToIndex[]> {
  return em.execute<ResourceToIndex[]>(
    `select ${resourceColumns} from resource r where ${withoutText} and r.id > ? order by r.id limit ?`,
    [repositoryId, force, afterId, limit],
  );
}

/** How many resources are without text: what a reindex's progress is a percentage of. */
export async function countResourcesWithoutText(em: EntityManager, repositoryId: string, force: boolean): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(`select count(*)::float8 as n from resource r where ${withoutText}`, [repositoryId, force]);
  return row?.n ?? 0;
}

/** How many current resources a reindex without `force` passes over: their extraction failed for reasons of their own. */
export async function countFailedResources(em: EntityManager, repositoryId: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::float8 as n from resource r join resource_text_failure f on f.resource_id = r.id
      where r.repository_id = ? and exists (select 1 from entry e where e.resource_id = r.id and e.is_latest)
        and not exists (select 1 from resource_text t where t.resource_id = r.id)`,
    [repositoryId],
  );
  return row?.n ?? 0;
}

/** A resource whose extraction failed, and why. */
export interface ExtractionFailure {
  resourceId: string;
  reasonCode: string;
  message: string;
}

/**
 * Marks resources whose extraction failed for reasons of their own (a bomb, the deadline, a corrupt
 * file): a reindex passes them over unless forced. A resource gone meanwhile is left out.
 */
export async function markExtractionFailures(em: EntityManager, repositoryId: string, failures: ExtractionFailure[]): Promise<void> {
  if (failures.length === 0) return;
  await em.execute(
    `insert into resource_text_failure (resource_id, repository_id, reason_code, message)
       select f."resourceId", ?, f."reasonCode", f.message
         from jsonb_to_recordset(?::jsonb) as f("resourceId" text, "reasonCode" text, message text) join resource r on r.id = f."resourceId"
     on conflict (resource_id) do update set reason_code = excluded.reason_code, message = excluded.message, failed_at = now()`,
    [repositoryId, JSON.stringify(failures)],
  );
}

/** Resources whose text a forced reindex has now extracted lose their failure mark. */
export async function clearExtractionFailures(em: EntityManager, resourceIds: string[]): Promise<void> {
  if (resourceIds.length > 0) await em.execute(`delete from resource_text_failure where resource_id in (select jsonb_array_elements_text(?::jsonb))`, [JSON.stringify(resourceIds)]);
}
