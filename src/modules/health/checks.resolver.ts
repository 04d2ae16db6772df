import { Args, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { findRepository } from '../repositories/operations.js';
import { connectionCheck } from './connection-check.js';
import { oncePerRequest, repositoryKey, RepositoryKeyArgs } from './check-arguments.js';

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
