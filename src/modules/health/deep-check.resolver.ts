import { Arg, Args, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { asyncJobResponse, AsyncJobResponseNode } from '../jobs/job.types.js';
import { findRepository } from '../repositories/operations.js';
import { findAdministrationJob, runDeepCheck, startDeepCheck } from './async-deep-check.js';
import { findDeepCheckReport, renderDeepCheckReport } from './deep-check-reports.js';
import { oncePerRequest, repositoryKey, RepositoryKeyArgs } from './check-arguments.js';

@ObjectType('DeepCheckScenario', { description: 'one scenario of a deep check' })
class DeepCheckScenarioNode {
  @Field(() => String, { description: 'e.g. CREATE CONTENT' }) scenarioName!: string;
  @Field(() => String, { description: 'what the scenario checks' }) scenarioDescription!: string;
  @Field(() => String, { description: 'passed, failed or skipped (full text disabled, or a scenario it builds on did not pass)' }) status!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => String, { nullable: true, description: 'why the scenario failed or was skipped; null when it passed' }) errorMessage!: string | null;
}

@ObjectType('DeepCheckFeature', { description: 'a feature of a deep check, with its scenarios' })
class DeepCheckFeatureNode {
  @Field(() => String, { description: '<n>. <title>' }) featureName!: string;
  @Field(() => String, { description: 'what the feature covers' }) featureDescription!: string;
  @Field(() => String, { description: 'failed when a scenario failed, skipped when every one was, else passed' }) status!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => [DeepCheckScenarioNode], { description: 'its scenarios, in the order they ran' }) listScenarios!: DeepCheckScenarioNode[];
}

@ObjectType('DeepCheckTest', { description: 'the run of a deep check, feature by feature' })
class DeepCheckTestNode {
  @Field(() => String, { description: "the repository's content access (partition)" }) accessId!: string;
  @Field(() => String, { description: 'success or failure' }) code!: string;
  @Field(() => [DeepCheckFeatureNode], { description: 'the features, in the order they ran' }) listFeatures!: DeepCheckFeatureNode[];
  @Field(() => String, { description: 'the report, as reportUrl' }) reportLocation!: string;
  @Field(() => String, { description: 'who ran the scenarios, and where' }) testDescription!: string;
  @Field(() => String, { description: "Deep health check of repository '<name>'" }) testName!: string;
  @Field(() => String, { description: 'yyyy.MM.dd.HH.mm.ss (UTC)' }) testTime!: string;
}

@ObjectType('DeepHealthCheckResponse', { description: 'the result of a deep check (spec endpoint 11)' })
class DeepHealthCheckResponseNode {
  @Field(() => ID, { description: 'the id of the report' }) _id!: string;
  @Field(() => String, { description: 'ok when no scenario failed' }) checkStatus!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => Int, { description: 'ms, as duration' }) elapsedTimeInMs!: number;
  @Field(() => String, { description: 'every scenario passed, or each failed scenario with its error' }) message!: string;
  @Field(() => String, { description: 'relative URL of the HTML report (with a sessionId of an administrator)' }) reportUrl!: string;
  @Field(() => String, { description: "Deep health check of repository '<name>'" }) testName!: string;
  @Field(() => String, { description: 'who ran the scenarios, and where' }) testDescription!: string;
  @Field(() => String, { description: 'yyyy.MM.dd.HH.mm.ss (UTC)' }) testTime!: string;
  @Field(() => DeepCheckTestNode, { description: 'the run, feature by feature' }) test!: DeepCheckTestNode;
}

@ObjectType('AsyncDeepCheckResponse', { description: 'the deep check job started by startDeepCheck (spec endpoint 12)' })
class AsyncDeepCheckResponseNode {
  @Field(() => ID, { description: 'the id of the check job (A/jobs/status)' }) _id!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
}

@Authorized('ADMIN')
@Resolver()
export class DeepCheckResolver {
  @Mutation(() => DeepHealthCheckResponseNode, {
    description:
      "spec endpoint 11: runs the spec's scenarios in a scratch folder of the repository (removed afterwards) and answers when they are done; a conflict while another deep check of the repository is pending or running",
  })
  async deepCheck(
    @Ctx() context: RequestContext,
    @Args(() => RepositoryKeyArgs) key: RepositoryKeyArgs,
  ) {
    const repository = await findRepository(context.services, context.em, repositoryKey(key));
    const principal = await context.principal();
    return oncePerRequest(context, `deep:${repository.id}`, () => runDeepCheck(context.services, context.em, principal, repository));
  }

  @Mutation(() => AsyncDeepCheckResponseNode, {
    description: 'spec endpoint 12: starts the deep check as a job (or answers the one of the repository pending or running); its status and result at administrationJobStatus',
  })
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
  async deepCheckReport(@Ctx() context: RequestContext, @Arg('reportId', () => ID, { description: "the _id of a deep check's result" }) reportId: string) {
    return renderDeepCheckReport(await findDeepCheckReport(context.em, reportId));
  }

  @Query(() => AsyncJobResponseNode, { description: 'A/jobs/status: the status of a job of the administration domain (the asynchronous deep check)' })
  async administrationJobStatus(@Ctx() context: RequestContext, @Arg('jobId', () => ID, { description: 'the _id answered by startDeepCheck' }) jobId: string) {
    const started = Date.now();
    return asyncJobResponse(await findAdministrationJob(context.em, jobId), started);
  }
}
