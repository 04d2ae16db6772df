import { createHash } from 'node:crypto';
import { z } from 'zod';
import { conflict, illegalArguments, notFound } from '../../errors.js';
import { authorize, authorizeJob } from '../access/policy.js';
import { mayAdminister } from '../access/roles.js';
import { validateProperties, validateTags } from '../entries/contents.js';
import type { Resource } from '../entries/entry.entity.js';
import { readContentWithResource } from '../entries/read.js';
import { validateEntryName } from '../entries/names.js';
import { requireParentFolder } from '../entries/queries.js';
import type { EntryScope } from '../entries/scope.js';
import type { EntryRecord } from '../search/entry-query.js';
import type { PlainRecord } from '../../db/plain-rows.js';
import { jobPriority } from '../jobs/queue.js';
import { convertJobName, findJob, mergeJobName, listJobs, markCancelled, requireJob, type JobRecord, type JobState, type NewJob } from '../jobs/records.js';

export const targetFormats = ['png', 'jpeg', 'webp', 'tiff'] as const;
export const resultActions = ['NEW_CONTENT', 'CONTENT_REPRESENTATION'] as const;
export type TargetFormat = (typeof targetFormats)[number];
export type ResultAction = (typeof resultActions)[number];

/** The job names of convert/image and convert/merge in the job system (declared with the job records, which record their changes of state). */
export { convertJobName, mergeJobName };

/** What a new content made of a page carries (spec: `name`, `description`, `parentId`, any content property). */
export interface NewContentSpecification {
  name?: string;
  parentId?: string;
  typeName?: string;
  tags?: string[];
  /** every other field of the specification (`description`, …) */
  properties: Record<string, unknown>;
}

export interface ImageConversionInput {
  contentId: string;
  resultAction: ResultAction;
  targetFormat: TargetFormat;
  newContentSpecification?: Record<string, unknown> | null;
}

/** POST C/convert/merge (DESIGN §12): contents merged, in this order, into one PDF created as new content. */
export interface MergeConversionInput {
  contentIds: string[];
  resultAction: ResultAction;
  newContentSpecification?: Record<string, unknown> | null;
}

const mergeInputSchema = z.object({
  contentIds: z.array(z.string().min(1, 'must not be empty')).min(1, 'must name at least one content'),
  resultAction: z.literal('NEW_CONTENT', { message: 'a merge makes new content: must be NEW_CONTENT' }),
});

const specificationSchema = z
  .object({
    name: z.string().optional(),
    parentId: z.string().optional(),
    typeName: z.string().optional(),
    tags: z.array(z.string()).optional(),
    properties: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

/** The specification split into the content's fields and its properties (validated like createContent's). */
export function parseSpecification(raw: Record<string, unknown> | null | undefined): NewContentSpecification {
  const parsed = specificationSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw illegalArguments(`newContentSpecification.${issue.path.join('.')}: ${issue.message}`);
  }
  const { name, parentId, typeName, tags, properties, ...rest } = parsed.data;
  return {
    name: name === undefined ? undefined : validateEntryName(name, 'newContentSpecification.name'),
    parentId,
    typeName,
    tags: validateTags(tags),
    properties: validateProperties({ ...rest, ...properties }),
  };
}

/** A session is a credential: the job record keeps a reference to it, never the session id itself. */
const sessionReference = (sessionToken: string | undefined) => (sessionToken ? createHash('sha256').update(sessionToken).digest('hex').slice(0, 16) : null);

export const mimeTypeOf = (format: TargetFormat) => `image/${format}`;

/**
 * POST C/convert/image: checks at once what can be checked without the bytes (the content exists and
 * has a resource; the folder of new contents exists), records the job and queues it — a 429 when the
 * caller has JOB_MAX_PENDING_PER_USER jobs queued. Everything found while the job runs (limits,
 * unreadable input) ends the job in `panic`.
 */
export async function startImageConversion(scope: EntryScope, input: ImageConversionInput, sessionToken?: string): Promise<JobRecord> {
  if (input.contentId === '') throw illegalArguments('contentId must not be empty');
  // pages kept as the content's representations change it (write, DESIGN §10); new contents only read it
  const [{ content, resource }] = await convertibleContents(scope, [input.contentId], input.resultAction === 'NEW_CONTENT' ? 'download' : 'convert');
  const specification = parseSpecification(input.newContentSpecification);
  if (input.resultAction === 'NEW_CONTENT') await requireParentFolder(scope, specification.parentId, 'newContentSpecification.parentId');
  const targetName = resultName(input.resultAction === 'NEW_CONTENT' ? specification.name : undefined, content.name, input.targetFormat, { page: 1, pages: 1 });
  return submitConversion(scope, sessionToken, {
    jobName: convertJobName,
    conversionType: 'IMAGE',
    contentIds: [content.id],
    inputFilenames: [resource.name],
    displayFilename: content.name,
    targetName,
    resultAction: input.resultAction,
    requestTypeShortName: 'ConvertToImageRequest',
    requestTypeSignature: 'POST /v1/convert/image',
    requestSelectiveInformation: `contentId=${content.id}, targetFormat=${input.targetFormat}, resultAction=${input.resultAction}`,
    serializedRequest: { contentId: content.id, resultAction: input.resultAction, targetFormat: input.targetFormat, newContentSpecification: input.newContentSpecification ?? null },
  });
}

/**
 * POST C/convert/merge (DESIGN §12): as convert/image, for several contents (each read by the caller:
 * the rules of a download) merged in the given order into one PDF, a new content in
 * newContentSpecification.parentId (write on that folder). The input limits are the job's first step.
 */
export async function startMerge(scope: EntryScope, input: MergeConversionInput, sessionToken?: string): Promise<JobRecord> {
  const parsed = mergeInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw illegalArguments(`${issue.path.join('.')}: ${issue.message}`);
  }
  const inputs = await convertibleContents(scope, parsed.data.contentIds, 'download');
  const specification = parseSpecification(input.newContentSpecification);
  await requireParentFolder(scope, specification.parentId, 'newContentSpecification.parentId');
  const contentIds = inputs.map(({ content }) => content.id);
  return submitConversion(scope, sessionToken, {
    jobName: mergeJobName,
    conversionType: 'MERGE',
    contentIds,
    inputFilenames: inputs.map(({ resource }) => resource.name),
    displayFilename: inputs[0]!.content.name,
    targetName: mergedName(specification.name, inputs[0]!.content.name),
    resultAction: 'NEW_CONTENT',
    requestTypeShortName: 'MergeRequest',
    requestTypeSignature: 'POST /v1/convert/merge',
    requestSelectiveInformation: `contentIds=${contentIds.join(',')}, resultAction=NEW_CONTENT`,
    serializedRequest: { contentIds, resultAction: 'NEW_CONTENT', newContentSpecification: input.newContentSpecification ?? null },
  });
}

/** Each content exists, may be read, is permitted `action` and has a resource to convert (404 otherwise). */
async function convertibleContents(scope: EntryScope, ids: readonly string[], action: 'download' | 'convert'): Promise<{ content: EntryRecord; resource: PlainRecord<Resource> }[]> {
  const found: { content: EntryRecord; resource: PlainRecord<Resource> }[] = [];
  for (const id of ids) {
    const { content, resource } = await readContentWithResource(scope, id);
    await authorize(scope, action, { entry: content });
    if (!resource) throw notFound(`content '${content.id}' has no resource to convert`);
    found.push({ content, resource });
  }
  return found;
}

/** What a conversion's record says of its request; the submission adds the caller, the repository and the queue's fields. */
type ConversionSubmission = Omit<NewJob, 'repositoryId' | 'clientUsername' | 'clientRoles' | 'partition' | 'clientSessionId' | 'priority' | 'owner' | 'exclusiveKey'>;

/** Records a conversion job of the caller and queues it, bounded by JOB_MAX_PENDING_PER_USER (429 beyond). */
function submitConversion(scope: EntryScope, sessionToken: string | undefined, job: ConversionSubmission): Promise<JobRecord> {
  return scope.services.jobs.submit(
    scope.em,
    {
      ...job,
      repositoryId: scope.repository.id,
      clientSessionId: sessionReference(sessionToken),
      clientUsername: scope.principal.userName,
      clientRoles: scope.principal.roles,
      priority: jobPriority.normal,
      partition: `access.svc.content.${scope.repository.name}`,
    },
    { bounded: true },
  );
}

/** A file name without its extension. */
const baseName = (name: string) => name.replace(/\.[A-Za-z0-9]{1,8}$/, '') || name;

/** File name extensions of each target format (the first is the one given when a name has none of them). */
const formatExtensions: Record<TargetFormat, readonly string[]> = { png: ['png'], jpeg: ['jpeg', 'jpg', 'jpe'], webp: ['webp'], tiff: ['tiff', 'tif'] };

/**
 * The name of a page's new content: the specification's name as given when it ends in an extension of
 * the format (`scan.jpg` for jpeg), else its name (or the source's) without extension plus the format's;
 * `<name>-<page>.<ext>` when the document has several pages.
 */
export function resultName(specified: string | undefined, sourceName: string, format: TargetFormat, { page, pages }: { page: number; pages: number }): string {
  const given = specified?.match(/\.([A-Za-z0-9]{1,8})$/)?.[1]?.toLowerCase();
  const extension = given && formatExtensions[format].includes(given) ? specified!.slice(-given.length) : format;
  const base = baseName(specified ?? sourceName);
  return pages > 1 ? `${base}-${page}.${extension}` : `${base}.${extension}`;
}

/** The merged PDF's name: the specification's (`.pdf` added when it has no such extension), else `<first input>-merged.pdf`. */
export function mergedName(specified: string | undefined, firstName: string): string {
  if (specified !== undefined) return /\.pdf$/i.test(specified) ? specified : `${baseName(specified)}.pdf`;
  return `${baseName(firstName)}-merged.pdf`;
}

/** The job of the scope's repository; a user sees their own jobs, an administrator every job. */
export async function getJob(scope: EntryScope, jobId: string): Promise<JobRecord> {
  const job = await requireJob(scope.em, scope.repository.id, jobId);
  authorizeJob(scope.principal, 'read', job);
  return job;
}

/**
 * POST C/jobs/cancel: its submitter or an administrator cancels a pending or running job of the
 * repository; it is `cancelled` at once. A running job's worker hears it (NOTIFY), stops its child
 * process, and stores nothing of it afterwards (`JobRun.whileRunning`). An ended job is a 409.
 */
export async function cancelJob(scope: EntryScope, jobId: string): Promise<JobRecord> {
  const job = await requireJob(scope.em, scope.repository.id, jobId);
  authorizeJob(scope.principal, 'cancel', job);
  const cancelled = await markCancelled(scope.em, jobId, `cancelled by ${scope.principal.userName}`);
  if (cancelled) return cancelled;
  const ended = (await findJob(scope.em, jobId)) ?? job;
  throw conflict(`job '${jobId}' has ended (${ended.state}): only a pending or running job can be cancelled`);
}

export interface JobsQuery {
  state?: JobState;
  limit: number;
  offset: number;
}

/** The cache area's Jobs list: newest first; a user's own jobs, every job for an administrator. */
export async function findJobs(scope: EntryScope, query: JobsQuery): Promise<{ count: number; entries: JobRecord[] }> {
  const own = mayAdminister(scope.principal) ? undefined : scope.principal.userName;
  return listJobs(scope.em, scope.repository.id, { ...query, clientUsername: own });
}
