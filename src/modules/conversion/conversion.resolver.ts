import { Arg, Authorized, Ctx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { graphqlEnum } from '../../graphql/enums.js';
import { subscribeMappingErrors } from '../../graphql/errors.js';
import { JSONObject } from '../../graphql/scalars.js';
import { entryScope } from '../entries/scope-of-request.js';
import { checkPaging } from '../search/entry-query.js';
import { asyncJobResponse, AsyncJobResponseNode, serviceRequestJob, ServiceRequestJobNode, type AsyncJobResponse } from '../jobs/job.types.js';
import { finalStates, findJob, jobStates, type JobState } from '../jobs/records.js';
import type { EntryScope } from '../entries/scope.js';
import {
  cancelJob,
  findJobs,
  getJob,
  resultActions,
  startImageConversion,
  startMerge,
  targetFormats,
  type ImageConversionInput,
  type MergeConversionInput,
  type ResultAction,
  type TargetFormat,
} from './operations.js';
import { listRepresentations } from './representations.js';
import { representationDownloadPath } from '../entries/views.js';

const TargetFormatEnum = graphqlEnum(targetFormats, {
  name: 'TargetFormat',
  description: 'the image format of the pages a conversion draws',
  valuesConfig: {
    png: { description: 'PNG' },
    jpeg: { description: 'JPEG, drawn on white' },
    webp: { description: 'WebP (at most 16383 pixels a side: a larger page or image is scaled to fit)' },
    tiff: { description: 'TIFF, LZW-compressed' },
  },
});
const ResultActionEnum = graphqlEnum(resultActions, {
  name: 'ResultAction',
  description: 'what a conversion makes of the pages it draws',
  valuesConfig: {
    NEW_CONTENT: { description: 'a new content per page, in newContentSpecification.parentId (the root when absent)' },
    CONTENT_REPRESENTATION: { description: 'page images of the converted version in the cache store (representations)' },
  },
});
const JobStateEnum = graphqlEnum(jobStates, {
  name: 'JobState',
  description: 'the state of a job: pending, then running, then Done or panic; or cancelled',
  valuesConfig: {
    pending: { description: 'waiting in the queue' },
    running: { description: 'a worker runs it' },
    Done: { description: 'finished; its result is in serializedResult' },
    panic: { description: 'failed: errorMessage, reasonCode and stackTrace say why' },
    cancelled: { description: 'cancelled (cancelJob, or its user was deleted) while pending or running: errorMessage says by whom' },
  },
});

@InputType('ImageConversionInput', { description: 'what to convert to images, and what to make of them (spec endpoint 4)' })
class ImageConversionInputNode implements ImageConversionInput {
  @Field(() => ID, { description: 'the id of the content version to convert' }) contentId!: string;
  @Field(() => ResultActionEnum, { description: 'new contents or page images of the version' }) resultAction!: ResultAction;
  @Field(() => TargetFormatEnum, { description: 'the image format of the pages' }) targetFormat!: TargetFormat;
  @Field(() => JSONObject, { nullable: true, description: 'NEW_CONTENT: name, parentId, typeName, tags, properties; any other field becomes a property' })
  newContentSpecification?: Record<string, unknown>;
}

@InputType('MergeConversionInput', { description: 'the contents to merge into one PDF, in order, and the new content it becomes (DESIGN §12)' })
class MergeConversionInputNode implements MergeConversionInput {
  @Field(() => [ID], { description: 'the content versions to merge, in this order: PDFs (every page) and images (one A4 page each)' }) contentIds!: string[];
  @Field(() => ResultActionEnum, { description: 'NEW_CONTENT (a merge makes a new content)' }) resultAction!: ResultAction;
  @Field(() => JSONObject, { nullable: true, description: 'name (.pdf added when missing), parentId, typeName, tags, properties; any other field becomes a property' })
  newContentSpecification?: Record<string, unknown>;
}

@ObjectType('ConversionResponse', { description: 'the conversion job started by convertToImage or mergeToPdf' })
class ConversionResponseNode {
  @Field(() => Int, { description: 'ms the service took to start the job' }) duration!: number;
  @Field(() => ID, { description: 'the conversion job (its status: jobStatus)' }) jobId!: string;
}

@ObjectType('JobsPage', { description: "a page of a repository's jobs, newest first" })
class JobsPageNode {
  @Field(() => Int, { description: 'all matching jobs, not the page size' }) count!: number;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => [ServiceRequestJobNode], { description: 'the jobs of this page' }) entries!: ServiceRequestJobNode[];
}

@ObjectType('Representation', { description: 'a page image of a content version, drawn by a conversion and kept in the cache store' })
class RepresentationNode {
  @Field(() => ID, { description: '<contentId>_<format>_<page>' }) id!: string;
  @Field(() => ID, { description: 'the content version it shows' }) contentId!: string;
  @Field(() => String, { description: 'png, jpeg, webp or tiff' }) format!: string;
  @Field(() => String, { description: 'image/<format>' }) mimeType!: string;
  @Field(() => Int, { description: 'the page number, from 1' }) page!: number;
  @Field(() => Int, { description: 'the number of pages of the document' }) pageCount!: number;
  @Field(() => String, { description: 'READY, or PLACEHOLDER for a page replaced under the REPLACE strategy or that could not be rendered' }) status!: string;
  @Field(() => Float, { description: 'bytes' }) fileSize!: number;
  @Field(() => Int, { description: 'pixels' }) width!: number;
  @Field(() => Int, { description: 'pixels' }) height!: number;
  @Field(() => ID, { nullable: true, description: 'the conversion job that drew it' }) jobId!: string | null;
  @Field(() => Date, { description: 'when the page was drawn' }) createdAt!: Date;
  @Field(() => String, { description: 'where the bytes are (GET, with the session as Bearer or sessionId; includeInactive=true for a deactivated content)' })
  downloadUrl!: string;
}

@ObjectType('RepresentationsPage', { description: 'the page images of a content version' })
class RepresentationsPageNode {
  @Field(() => Int, { description: 'the number of page images (the list is not paged)' }) count!: number;
  @Field(() => [RepresentationNode], { description: 'by format, then page' }) entries!: RepresentationNode[];
}

/**
 * The job's status now, then at every change of its state or percentage (announced by the process that
 * made it, through Postgres NOTIFY) until a final state. Listening starts before the first read, so no
 * change falls between.
 */
async function* jobStatusChanges(scope: EntryScope, jobId: string): AsyncGenerator<AsyncJobResponse> {
  const changes = await scope.services.jobs.changes.watch(jobId);
  try {
    let job = await getJob(scope, jobId);
    let last = '';
    for (;;) {
      const key = `${job.state}|${job.percentage}`;
      if (key !== last) {
        last = key;
        yield asyncJobResponse(job, Date.now());
      }
      if (finalStates.includes(job.state)) return;
      const next = await changes.next();
      if (next.done) return;
      const current = (await findJob(scope.em, jobId)) ?? job;
      // each announced change is delivered with its own state and percentage, even when the record moved on
      job = next.value.state === undefined ? current : { ...current, state: next.value.state, percentage: Number(next.value.percentage) };
    }
  } finally {
    await changes.return?.();
  }
}

@Authorized()
@Resolver()
export class ConversionResolver {
  @Mutation(() => ConversionResponseNode, {
    description: 'starts converting a content to images; the job runs in the background (tooManyRequests, with extensions.retryAfter, when the caller has JOB_MAX_PENDING_PER_USER jobs queued)',
  })
  async convertToImage(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('input', () => ImageConversionInputNode, { description: 'what to convert and into what' }) input: ImageConversionInputNode,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    const job = await startImageConversion(await entryScope(context, repository), input, context.sessionToken);
    return { jobId: job.id, duration: Date.now() - started };
  }

  @Mutation(() => ConversionResponseNode, {
    description: 'starts merging contents into one PDF, a new content; the job runs in the background (tooManyRequests as convertToImage)',
  })
  async mergeToPdf(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('input', () => MergeConversionInputNode, { description: 'what to merge, in order, and into which new content' }) input: MergeConversionInputNode,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    const job = await startMerge(await entryScope(context, repository), input, context.sessionToken);
    return { jobId: job.id, duration: Date.now() - started };
  }

  @Query(() => AsyncJobResponseNode, { description: "a job's status (spec endpoint 5): a user's own jobs, an administrator's any job of the repository" })
  async jobStatus(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('jobId', () => ID, { description: 'the id answered by convertToImage or reindex' }) jobId: string,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    return asyncJobResponse(await getJob(await entryScope(context, repository), jobId), started);
  }

  @Mutation(() => AsyncJobResponseNode, {
    description: 'cancels a pending or running job (its submitter or an administrator; others: accessDenied): cancelled at once, a running one stopped; an ended job is a conflict',
  })
  async cancelJob(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('jobId', () => ID, { description: 'the id answered by convertToImage or reindex' }) jobId: string,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    return asyncJobResponse(await cancelJob(await entryScope(context, repository), jobId), started);
  }

  @Subscription(() => AsyncJobResponseNode, {
    name: 'jobStatus',
    description: "the job's status now and at every change of its state or percentage, until it ends",
    subscribe: subscribeMappingErrors(async ({ args, context }) => {
      const scope = await entryScope(context as RequestContext, args.repository as string);
      await getJob(scope, args.jobId as string); // a job the caller may not see is refused at once
      return jobStatusChanges(scope, args.jobId as string);
    }),
  })
  jobStatusChanges(
    @Root() status: AsyncJobResponse,
    @Arg('repository', () => String, { description: "the repository's name" }) _repository: string,
    @Arg('jobId', () => ID, { description: 'the id answered by convertToImage or reindex' }) _jobId: string,
  ): AsyncJobResponse {
    return status;
  }

  @Query(() => JobsPageNode, { description: "the cache area's Jobs list, newest first" })
  async jobs(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('state', () => JobStateEnum, { nullable: true, description: 'only the jobs in this state' }) state: JobState | undefined,
    @Arg('limit', () => Int, { nullable: true, description: 'default 100, at most 1000' }) limit: number | undefined,
    @Arg('offset', () => Int, { nullable: true, description: 'default 0' }) offset: number | undefined,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    const page = await findJobs(await entryScope(context, repository), { state, ...checkPaging(limit, offset) });
    return { count: page.count, duration: Date.now() - started, entries: page.entries.map(serviceRequestJob) };
  }

  @Query(() => RepresentationsPageNode, { description: 'the page images of a version of a content' })
  async representations(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('contentId', () => ID, { description: 'the id of the content version' }) contentId: string,
    @Arg('includeInactive', () => Boolean, { defaultValue: false, description: "a deactivated content's pages: for its owner and administrators" }) includeInactive: boolean,
    @Ctx() context: RequestContext,
  ) {
    const scope = await entryScope(context, repository);
    const page = await listRepresentations(scope, contentId, { includeInactive });
    const downloadUrl = (id: string) => representationDownloadPath(context.services.config.BASE_PATH, scope.repository.id, id);
    return { count: page.count, entries: page.entries.map((r) => ({ ...r, contentId: r.sourceEntryId, downloadUrl: downloadUrl(r.id) })) };
  }
}
