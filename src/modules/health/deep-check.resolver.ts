import { Arg, Args, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { asyncJobResponse, AsyncJobResponseNode } from '../jobs/job.types.js';
import { findRepository } from '../repositories/operations.js';
import { deepCheckOptionsOf, findAdministrationJob, startDeepCheck } from './async-deep-check.js';
import { deepCheck } from './deep-check.js';
import { findDeepCheckReport, renderDeepCheckReport } from './deep-check-reports.js';
import { oncePerRequest, repositoryKey, RepositoryKeyArgs } from './check-arguments.js';

@ObjectType('DeepCheckScenario')
class DeepCheckScenarioNode {
  @Field(() => String) scenarioName!: string;
  @Field(() => String) scenarioDescription!: string;
  @Field(() => String, { description: 'passed, failed or skipped (full text disabled, or a scenario it builds on did not pass)' }) status!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => String, { nullable: true }) errorMessage!: string | null;
}

@ObjectType('DeepCheckFeature')
class DeepCheckFeatureNode {
  @Field(() => String, { description: '<n>. <title>' }) featureName!: string;
  @Field(() => String) featureDescription!: string;
  @Field(() => String) status!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => [DeepCheckScenarioNode]) listScenarios!: DeepCheckScenarioNode[];
}

@ObjectType('DeepCheckTest')
class DeepCheckTestNode {
  @Field(() => String, { description: "the repository's content access (partition)" }) accessId!: string;
  @Field(() => String, { description: 'success or failure' }) code!: string;
  @Field(() => [DeepCheckFeatureNode]) listFeatures!: DeepCheckFeatureNode[];
  @Field(() => String) reportLocation!: string;
  @Field(() => String) testDescription!: string;
  @Field(() => String) testName!: string;
  @Field(() => String, { description: 'yyyy.MM.dd.HH.mm.ss (UTC)' }) testTime!: string;
}

@ObjectType('DeepHealthCheckResponse')
class DeepHealthCheckResponseNode {
  @Field(() => ID, { description: 'the id of the report' }) _id!: string;
  @Field(() => String, { description: 'ok when no scenario failed' }) checkStatus!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => Int) elapsedTimeInMs!: number;
  @Field(() => String) message!: string;
  @Field(() => String, { description: 'relative URL of the HTML report (with a sessionId of an administrator)' }) reportUrl!: string;
  @Field(() => String) testName!: string;
  @Field(() => String) testDescription!: string;
  @Field(() => String, { description: 'yyyy.MM.dd.HH.mm.ss (UTC)' }) testTime!: string;
  @Field(() => DeepCheckTestNode) test!: DeepCheckTestNode;
}

@ObjectType('AsyncDeepCheckResponse')
class AsyncDeepCheckResponseNode {
  @Field(() => ID, { description: 'the id of the check job (A/jobs/status)' }) _id!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
}

@Authorized('ADMIN')
@Resolver()
export class DeepCheckResolver {
  @Mutation(() => DeepHealthCheckResponseNode, {
    description: "spec endpoint 11: runs the spec's scenarios in a scratch folder of the repository (removed afterwards) and answers when they are done",
  })
  async deepCheck(
    @Ctx() context: RequestContext,
    @Args(() => RepositoryKeyArgs) key: RepositoryKeyArgs,
  ) {
    const repository = await findRepository(context.services, context.em, repositoryKey(key));
    const principal = await context.principal();
    return oncePerRequest(context, `deep:${repository.id}`, () => deepCheck(context.services, principal, repository, deepCheckOptionsOf(context.services.config)));
  }

  @Mutation(() => AsyncDeepCheckResponseNode, { description: 'spec endpoint 12: starts the deep check as a job; its status and result at administrationJobStatus' })
  async startDeepCheck(
    @Ctx() context: RequestContext,
    @Args(() => RepositoryKeyArgs) key: RepositoryKeyArgs,
  ) {
    const started = Date.now();
    const repository = await findRepository(context.services, context.em, repositoryKey(key));
    const principal = await context.principal();
    const job = await oncePerRequest(context, `async-deep:${repository.id}`, () => startDeepCheck(context.em, context.services.jobs, principal, repository));
    return { _id: job.id, duration: Date.now() - started };
  }

  @Query(() => String, { description: 'the HTML page of a deep check report (reportUrl serves it)' })
  async deepCheckReport(@Ctx() context: RequestContext, @Arg('reportId', () => ID) reportId: string) {
    return renderDeepCheckReport(await findDeepCheckReport(context.em, reportId));
  }

  @Query(() => AsyncJobResponseNode, { description: 'A/jobs/status: the status of a job of the administration domain (the asynchronous deep check)' })
  async administrationJobStatus(@Ctx() context: RequestContext, @Arg('jobId', () => ID) jobId: string) {
    const started = Date.now();
    return asyncJobResponse(await findAdministrationJob(context.em, jobId), started);
  }
}
