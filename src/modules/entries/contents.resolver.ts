import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { createContent, getContent } from './contents.js';
import { ContentNode } from './entry.types.js';
import { CreateContentInputNode } from './inputs.js';
import { entryScope } from './scope-of-request.js';

@Authorized()
@Resolver()
export class ContentsResolver {
  @Query(() => ContentNode, { description: 'a content version by id' })
  async content(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the version' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return getContent(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'a new content, version 1.0, over an upload' })
  async createContent(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('input', () => CreateContentInputNode, { description: 'the upload, and the name, folder, type, tags and properties of the content' }) input: CreateContentInputNode,
    @Ctx() context: RequestContext,
  ) {
    return createContent(await entryScope(context, repository), input);
  }
}
