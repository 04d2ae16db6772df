import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { durationOf, type JobRecord } from './records.js';

/** The spec's `serviceRequestJob`: shared by the content subgraph (conversion jobs) and the health subgraph (administration jobs). */
@Directive('@shareable')
@ObjectType('ServiceRequestJob', { description: 'the record of a background job: a conversion, a text extraction, a reindexing or an asynchronous deep check' })
export class ServiceRequestJobNode {
  @Field(() => ID, { description: 'the job id (jobId)' }) id!: string;
  @Field(() => ID, { nullable: true, description: 'the queue job that runs or ran it; null while pending (queue jobs take records in turns)' }) conversionJobId!: string | null;
  @Field(() => String, { description: 'the kind of job: IMAGE, TEXT_EXTRACTION, REINDEX or DEEP_CHECK' }) conversionType!: string;
  @Field(() => String, { nullable: true, description: 'a reference to the session that started the job (never the session id)' }) clientSessionId!: string | null;
  @Field(() => String, { description: 'the user who started the job; (service) for text extraction' }) clientUsername!: string;
  @Field(() => [ID], { description: 'the contents the job reads (a text extraction adds them batch by batch)' }) contentIds!: string[];
  @Field(() => [String], { description: "the file names of the contents' resources the job reads" }) inputFilenames!: string[];
  @Field(() => String, { nullable: true, description: 'conversion: the name of the converted content; null for other jobs' }) displayFilename!: string | null;
  @Field(() => String, { nullable: true, description: 'conversion: the name of the result, <name>.<ext> (new contents of several pages add -<page>); null for other jobs' })
  targetName!: string | null;
  @Field(() => String, { nullable: true, description: 'conversion: NEW_CONTENT or CONTENT_REPRESENTATION; null for other jobs' }) resultAction!: string | null;
  @Field(() => String, { description: 'pending, running, Done, panic (failed) or cancelled' }) state!: string;
  @Field(() => Float, { description: 'progress, 0 to 100 (100 when Done)' }) percentage!: number;
  @Field(() => Int, { description: 'queue priority: 0 normal, -10 text extraction and reindexing, -20 a conversion put back by LOW_PRIORITY' }) priority!: number;
  @Field(() => Int, { description: 'how many times a worker started the job (more than 1 after a worker died, a LOW_PRIORITY requeue, a text extraction that gave its turn up, or a run Postgres broke off in a deadlock)' }) tries!: number;
  @Field(() => Boolean, { description: 'true until the job fails (panic)' }) revivable!: boolean;
  @Field(() => Date, { description: 'when the job was submitted' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'when a worker first started the job; null while it has not' }) startTimestamp!: Date | null;
  @Field(() => Date, { nullable: true, description: 'when the job ended (Done, panic or cancelled); null until then' }) endTimestamp!: Date | null;
  @Field(() => Date, { description: "when the job's record last changed" }) lastStatusUpdate!: Date;
  @Field(() => Int, { description: 'ms from its submission to its end, or to now while it has not ended' }) duration!: number;
  @Field(() => String, { nullable: true, description: 'the worker (WORKER_NAME) that runs or ran the job; null before one took it' }) workerName!: string | null;
  @Field(() => String, { nullable: true, description: 'why the job failed (panic), or by whom it was cancelled (cancelled); null otherwise' }) errorMessage!: string | null;
  @Field(() => String, { nullable: true, description: "the failure's reason code, e.g. illegalArguments; null unless panic" }) reasonCode!: string | null;
  @Field(() => String, { nullable: true, description: 'the full stack of the error that ended the job; null unless panic' }) stackTrace!: string | null;
  @Field(() => String, { description: 'the content access of its repository: access.svc.content.<repository>' }) partition!: string;
  @Field(() => String, { nullable: true, description: 'the parameters that tell the request apart, e.g. contentId=…, targetFormat=…, resultAction=…; null for some jobs' })
  requestSelectiveInformation!: string | null;
  @Field(() => String, { nullable: true, description: 'the kind of request, e.g. ConvertToImageRequest' }) requestTypeShortName!: string | null;
  @Field(() => String, { nullable: true, description: 'the call that started the job, e.g. POST /v1/convert/image; null for a text extraction' }) requestTypeSignature!: string | null;
  @Field(() => String, { description: 'JSON' }) serializedRequest!: string;
  @Field(() => String, { nullable: true, description: 'JSON' }) serializedLowlevelRequest!: string | null;
  @Field(() => String, { nullable: true, description: 'JSON' }) serializedResult!: string | null;
}

@Directive('@shareable')
@ObjectType('AsyncJobResponse', { description: 'the status of a job (C/jobs/status, A/jobs/status)' })
export class AsyncJobResponseNode {
  @Field(() => Int, { description: 'ms the service took to read the status' }) duration!: number;
  @Field(() => String, { description: 'the cache access id of the repository' }) representationAccessId!: string;
  @Field(() => String, { description: "the job's state, as serviceRequestJob.state" }) state!: string;
  @Field(() => ServiceRequestJobNode, { description: "the job's record" }) serviceRequestJob!: ServiceRequestJobNode;
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export const serviceRequestJob = (job: JobRecord): ServiceRequestJobNode => ({
  ...job,
  conversionJobId: job.queueJobId,
  duration: durationOf(job),
  serializedRequest: JSON.stringify(job.serializedRequest),
  serializedLowlevelRequest: json(job.serializedLowlevelRequest),
  serializedResult: json(job.serializedResult),
});

export interface AsyncJobResponse {
  duration: number;
  representationAccessId: string;
  state: string;
  serviceRequestJob: ServiceRequestJobNode;
}

/** The status of a job as `C/jobs/status` and `A/jobs/status` answer it. */
export const asyncJobResponse = (job: JobRecord, started: number): AsyncJobResponse => ({
  duration: Date.now() - started,
  representationAccessId: `cache.${job.partition}`,
  state: job.state,
  serviceRequestJob: serviceRequestJob(job),
});

