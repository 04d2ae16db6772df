import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { createContent, getContent } from './contents.js';
import { ContentNode } from './entry.types.js';
import { CreateContentInput } from './inputs.js';
import { entryScope } from './scope-of-request.js';

@Authorized()
@Resolver()
export class ContentsResolver {
  @Query(() => ContentNode)
  async content(@Arg('repository', () => String) repository: string, @Arg('id', () => ID) id: string, @Ctx() context: RequestContext) {
    return getContent(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'a new content, version 1.0, over an upload' })
  async createContent(
    @Arg('repository', () => String) repository: string,
    @Arg('input', () => CreateContentInput) input: CreateContentInput,
    @Ctx() context: RequestContext,
  ) {
    return createContent(await entryScope(context, repository), input);
  }
}
