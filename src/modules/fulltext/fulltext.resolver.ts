import { Arg, Authorized, Ctx, Field, ID, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { entryScope } from '../entries/scope-of-request.js';
import { startReindex } from './operations.js';

@ObjectType('ReindexResponse', { description: 'the reindexing job started by reindex' })
class ReindexResponseNode {
  @Field(() => ID, { description: 'the reindexing job (its status: jobStatus); the one pending or running when there is one' }) jobId!: string;
}

@Authorized()
@Resolver()
export class FullTextResolver {
  @Mutation(() => ReindexResponseNode, {
    description:
      'extracts the text of every current content without one (administrators); the job runs in the background, one per repository at a time: while one is pending or running, its id is answered',
  })
  async reindex(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('force', () => Boolean, { defaultValue: false, description: 'also the resources whose extraction failed for reasons of their own (a bomb, the deadline, a corrupt file), which a reindex otherwise passes over' })
    force: boolean,
    @Ctx() context: RequestContext,
  ) {
    const job = await startReindex(await entryScope(context, repository), { force });
    return { jobId: job.id };
  }
}
