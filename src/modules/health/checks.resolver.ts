import { Args, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { findRepository } from '../repositories/operations.js';
import { connectionCheck } from './connection-check.js';
import { oncePerRequest, repositoryKey, RepositoryKeyArgs } from './check-arguments.js';

@ObjectType('CheckResultEntry', { description: 'one part of a connection check' })
class CheckResultEntryNode {
  @Field(() => ID, { description: 'a random id of this entry' }) _id!: string;
  @Field(() => String, { description: 'the part, e.g. database connection configuration' }) name!: string;
  @Field(() => String, { description: 'ok or failed' }) checkStatus!: string;
  @Field(() => String, { description: 'what the part found' }) message!: string;
  @Field(() => String, { nullable: true, description: 'what was checked, and how long it took' }) details!: string | null;
  @Field(() => Boolean, { description: 'whether details is Markdown (false: plain text)' }) detailsAsMarkdown!: boolean;
}

@ObjectType('CheckResponse', { description: 'the result of a connection check (spec endpoint 10)' })
class CheckResponseNode {
  @Field(() => ID, { description: 'a random id of this check' }) _id!: string;
  @Field(() => String, { description: 'ok when every entry is' }) checkStatus!: string;
  @Field(() => String, { description: 'every check passed, or the names of the parts that failed' }) message!: string;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => Int, { description: 'ms, as duration' }) elapsedTimeInMs!: number;
  @Field(() => [CheckResultEntryNode], { description: 'one per part: database, content storage, cache storage, content configuration, conversion, async and fulltext configuration' })
  entries!: CheckResultEntryNode[];
}

@Authorized('ADMIN')
@Resolver()
export class ChecksResolver {
  @Query(() => CheckResponseNode, { description: 'spec endpoint 10: the repository and what it relies on, part by part' })
  async connectionCheck(
    @Ctx() context: RequestContext,
    @Args(() => RepositoryKeyArgs) key: RepositoryKeyArgs,
  ) {
    const repository = await findRepository(context.services, context.em, repositoryKey(key));
    return oncePerRequest(context, `connection:${repository.id}`, () => connectionCheck(context.em, context.services, repository));
  }
}
