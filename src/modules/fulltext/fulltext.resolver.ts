import { Arg, Authorized, Ctx, Field, ID, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { entryScope } from '../entries/scope-of-request.js';
import { startReindex } from './operations.js';

@ObjectType('ReindexResponse', { description: 'the reindexing job started by reindex' })
class ReindexResponseNode {
  @Field(() => ID, { description: 'the reindexing job (its status: jobStatus)' }) jobId!: string;
}

@Authorized()
@Resolver()
export class FullTextResolver {
  @Mutation(() => ReindexResponseNode, { description: 'extracts the text of every current content without one (administrators); the job runs in the background' })
  async reindex(@Arg('repository', () => String, { description: "the repository's name" }) repository: string, @Ctx() context: RequestContext) {
    const job = await startReindex(await entryScope(context, repository));
    return { jobId: job.id };
  }
}
