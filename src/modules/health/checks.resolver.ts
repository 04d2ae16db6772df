import { Arg, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import { findRepository, type RepositoryKey } from '../repositories/operations.js';
import { connectionCheck, type CheckResult } from './connection-check.js';

@ObjectType('CheckResultEntry')
class CheckResultEntryNode {
  @Field(() => ID) _id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'ok or failed' }) checkStatus!: string;
  @Field(() => String) message!: string;
  @Field(() => String, { nullable: true }) details!: string | null;
  @Field(() => Boolean) detailsAsMarkdown!: boolean;
}

@ObjectType('CheckResponse')
class CheckResponseNode {
  @Field(() => ID) _id!: string;
  @Field(() => String, { description: 'ok when every entry is' }) checkStatus!: string;
  @Field(() => String) message!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => Int) elapsedTimeInMs!: number;
  @Field(() => [CheckResultEntryNode]) entries!: CheckResultEntryNode[];
}

/**
 * Checks run once per request and repository, however many aliases ask for them (alias amplification
 * would otherwise multiply storage probes and database round trips by the aliases in one query).
 */
const runsOfRequest = new WeakMap<RequestContext, Map<string, Promise<CheckResult>>>();

function oncePerRequest(context: RequestContext, key: string, run: () => Promise<CheckResult>): Promise<CheckResult> {
  let runs = runsOfRequest.get(context);
  if (!runs) runsOfRequest.set(context, (runs = new Map()));
  let result = runs.get(key);
  if (!result) runs.set(key, (result = run()));
  return result;
}

function repositoryKey(repositoryId?: string | null, repositoryName?: string | null, repositoryTechnicalName?: string | null): RepositoryKey {
  const given = [repositoryId, repositoryName, repositoryTechnicalName].filter((value) => value !== undefined && value !== null);
  if (given.length !== 1) throw illegalArguments('give one of repositoryId, repositoryName, repositoryTechnicalName');
  if (repositoryId) return { repositoryId };
  if (repositoryName) return { repositoryName };
  return { repositoryTechnicalName: repositoryTechnicalName! };
}

@Authorized('ADMIN')
@Resolver()
export class ChecksResolver {
  @Query(() => CheckResponseNode, { description: 'spec endpoint 10: the repository and what it relies on, part by part' })
  async connectionCheck(
    @Ctx() context: RequestContext,
    @Arg('repositoryId', () => ID, { nullable: true }) repositoryId?: string,
    @Arg('repositoryName', () => String, { nullable: true }) repositoryName?: string,
    @Arg('repositoryTechnicalName', () => String, { nullable: true }) repositoryTechnicalName?: string,
  ) {
    const repository = await findRepository(context.em, repositoryKey(repositoryId, repositoryName, repositoryTechnicalName));
    return oncePerRequest(context, `connection:${repository.id}`, () => connectionCheck(context.em, context.services, repository));
  }
}
