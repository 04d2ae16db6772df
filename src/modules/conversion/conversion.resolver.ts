import { Arg, Authorized, Ctx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription, registerEnumType } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { subscribeMappingErrors } from '../../graphql/errors.js';
import { JSONObject } from '../../graphql/scalars.js';
import { entryScope } from '../entries/scope-of-request.js';
import { checkPaging } from '../search/entry-query.js';
import { asyncJobResponse, AsyncJobResponseNode, serviceRequestJob, ServiceRequestJobNode, type AsyncJobResponse } from '../jobs/job.types.js';
import { finalStates, findJob, type JobState } from '../jobs/records.js';
import type { EntryScope } from '../entries/scope.js';
import { findJobs, getJob, startImageConversion, type ResultAction, type TargetFormat } from './operations.js';
import { listRepresentations } from './representations.js';
import { representationDownloadPath } from '../entries/views.js';

enum TargetFormatEnum {
  png = 'png',
  jpeg = 'jpeg',
  webp = 'webp',
  tiff = 'tiff',
}
enum ResultActionEnum {
  NEW_CONTENT = 'NEW_CONTENT',
  CONTENT_REPRESENTATION = 'CONTENT_REPRESENTATION',
}
enum JobStateEnum {
  pending = 'pending',
  running = 'running',
  Done = 'Done',
  panic = 'panic',
  cancelled = 'cancelled',
}
registerEnumType(TargetFormatEnum, { name: 'TargetFormat' });
registerEnumType(ResultActionEnum, { name: 'ResultAction' });
registerEnumType(JobStateEnum, { name: 'JobState' });

@InputType('ImageConversionInput')
class ImageConversionInputNode {
  @Field(() => ID) contentId!: string;
  @Field(() => ResultActionEnum) resultAction!: ResultAction;
  @Field(() => TargetFormatEnum) targetFormat!: TargetFormat;
  @Field(() => JSONObject, { nullable: true, description: 'NEW_CONTENT: name, parentId, typeName, tags, properties; any other field becomes a property' })
  newContentSpecification?: Record<string, unknown>;
}

@ObjectType('ConversionResponse')
class ConversionResponseNode {
  @Field(() => Int) duration!: number;
  @Field(() => ID) jobId!: string;
}

@ObjectType('JobsPage')
class JobsPageNode {
  @Field(() => Int) count!: number;
  @Field(() => Int) duration!: number;
  @Field(() => [ServiceRequestJobNode]) entries!: ServiceRequestJobNode[];
}

@ObjectType('Representation')
class RepresentationNode {
  @Field(() => ID) id!: string;
  @Field(() => ID) contentId!: string;
  @Field(() => String) format!: string;
  @Field(() => String) mimeType!: string;
  @Field(() => Int) page!: number;
  @Field(() => Int) pageCount!: number;
  @Field(() => String, { description: 'READY, or PLACEHOLDER for a page replaced under the REPLACE strategy or that could not be rendered' }) status!: string;
  @Field(() => Float) fileSize!: number;
  @Field(() => Int) width!: number;
  @Field(() => Int) height!: number;
  @Field(() => ID, { nullable: true, description: 'the conversion job that drew it' }) jobId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String, { description: 'where the bytes are (GET, with the session as Bearer or sessionId; includeInactive=true for a deactivated content)' })
  downloadUrl!: string;
}

@ObjectType('RepresentationsPage')
class RepresentationsPageNode {
  @Field(() => Int) count!: number;
  @Field(() => [RepresentationNode]) entries!: RepresentationNode[];
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
  @Mutation(() => ConversionResponseNode, { description: 'starts converting a content to images; the job runs in the background' })
  async convertToImage(
    @Arg('repository', () => String) repository: string,
    @Arg('input', () => ImageConversionInputNode) input: ImageConversionInputNode,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    const job = await startImageConversion(await entryScope(context, repository), input, context.sessionToken);
    return { jobId: job.id, duration: Date.now() - started };
  }

  @Query(() => AsyncJobResponseNode)
  async jobStatus(@Arg('repository', () => String) repository: string, @Arg('jobId', () => ID) jobId: string, @Ctx() context: RequestContext) {
    const started = Date.now();
    return asyncJobResponse(await getJob(await entryScope(context, repository), jobId), started);
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
    @Arg('repository', () => String) _repository: string,
    @Arg('jobId', () => ID) _jobId: string,
  ): AsyncJobResponse {
    return status;
  }

  @Query(() => JobsPageNode, { description: "the cache area's Jobs list, newest first" })
  async jobs(
    @Arg('repository', () => String) repository: string,
    @Arg('state', () => JobStateEnum, { nullable: true }) state: JobState | undefined,
    @Arg('limit', () => Int, { nullable: true }) limit: number | undefined,
    @Arg('offset', () => Int, { nullable: true }) offset: number | undefined,
    @Ctx() context: RequestContext,
  ) {
    const started = Date.now();
    const page = await findJobs(await entryScope(context, repository), { state, ...checkPaging(limit, offset) });
    return { count: page.count, duration: Date.now() - started, entries: page.entries.map(serviceRequestJob) };
  }

  @Query(() => RepresentationsPageNode, { description: 'the page images of a version of a content' })
  async representations(
    @Arg('repository', () => String) repository: string,
    @Arg('contentId', () => ID) contentId: string,
    @Arg('includeInactive', () => Boolean, { defaultValue: false, description: "a deactivated content's pages: for its owner and administrators" }) includeInactive: boolean,
    @Ctx() context: RequestContext,
  ) {
    const scope = await entryScope(context, repository);
    const page = await listRepresentations(scope, contentId, { includeInactive });
    const downloadUrl = (id: string) => representationDownloadPath(context.services.config.BASE_PATH, scope.repository.id, id);
    return { count: page.count, entries: page.entries.map((r) => ({ ...r, contentId: r.sourceEntryId, downloadUrl: downloadUrl(r.id) })) };
  }
}
