import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { durationOf, type JobRecord } from './records.js';

/** The spec's `serviceRequestJob`: shared by the content subgraph (conversion jobs) and the health subgraph (administration jobs). */
@Directive('@shareable')
@ObjectType('ServiceRequestJob')
export class ServiceRequestJobNode {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true, description: 'the id of the job in the queue' }) conversionJobId!: string | null;
  @Field(() => String) conversionType!: string;
  @Field(() => String, { nullable: true, description: 'a reference to the session that started the job (never the session id)' }) clientSessionId!: string | null;
  @Field(() => String) clientUsername!: string;
  @Field(() => [ID]) contentIds!: string[];
  @Field(() => [String]) inputFilenames!: string[];
  @Field(() => String, { nullable: true }) displayFilename!: string | null;
  @Field(() => String, { nullable: true }) targetName!: string | null;
  @Field(() => String, { nullable: true }) resultAction!: string | null;
  @Field(() => String) state!: string;
  @Field(() => Float) percentage!: number;
  @Field(() => Int) priority!: number;
  @Field(() => Int) tries!: number;
  @Field(() => Boolean) revivable!: boolean;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true }) startTimestamp!: Date | null;
  @Field(() => Date, { nullable: true }) endTimestamp!: Date | null;
  @Field(() => Date) lastStatusUpdate!: Date;
  @Field(() => Int) duration!: number;
  @Field(() => String, { nullable: true }) workerName!: string | null;
  @Field(() => String, { nullable: true }) errorMessage!: string | null;
  @Field(() => String, { nullable: true }) reasonCode!: string | null;
  @Field(() => String, { nullable: true }) stackTrace!: string | null;
  @Field(() => String) partition!: string;
  @Field(() => String, { nullable: true }) requestSelectiveInformation!: string | null;
  @Field(() => String, { nullable: true }) requestTypeShortName!: string | null;
  @Field(() => String, { nullable: true }) requestTypeSignature!: string | null;
  @Field(() => String, { description: 'JSON' }) serializedRequest!: string;
  @Field(() => String, { nullable: true, description: 'JSON' }) serializedLowlevelRequest!: string | null;
  @Field(() => String, { nullable: true, description: 'JSON' }) serializedResult!: string | null;
}

@Directive('@shareable')
@ObjectType('AsyncJobResponse')
export class AsyncJobResponseNode {
  @Field(() => Int) duration!: number;
  @Field(() => String, { description: 'the cache access id of the repository' }) representationAccessId!: string;
  @Field(() => String) state!: string;
  @Field(() => ServiceRequestJobNode) serviceRequestJob!: ServiceRequestJobNode;
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

