import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { ContentNode, EntriesPageNode, SearchOptionsInput } from '../entries/entry.types.js';
import { entryScope } from '../entries/scope-of-request.js';
import { CheckInInputNode, ReplaceResourceInputNode } from './inputs.js';
import { cancelCheckOut, checkIn, checkOut, lock, replaceResource, unlock, versions } from './operations.js';

/** Versioning (DESIGN §5): every `id` may name any version of the content. */
@Authorized()
@Resolver()
export class VersionsResolver {
  @Query(() => EntriesPageNode, { description: 'every CURRENT version of a content, newest first' })
  async versions(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return versions(await entryScope(context, repository), id, options ?? {});
  }

  @Mutation(() => ContentNode, { description: 'creates the working copy and locks the content for the caller' })
  async checkOut(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return checkOut(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'the working copy becomes the new latest version; the lock is released' })
  async checkIn(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Arg('input', () => CheckInInputNode, { nullable: true, description: 'major or minor, comment and new bytes (default: a major version, same bytes)' }) input: CheckInInputNode | undefined,
    @Ctx() context: RequestContext,
  ) {
    return checkIn(await entryScope(context, repository), id, input ?? {});
  }

  @Mutation(() => ContentNode, { description: 'deletes the working copy and unlocks; answers the latest version' })
  async cancelCheckOut(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return cancelCheckOut(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'locks the content for the caller' })
  async lock(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return lock(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: "releases the caller's lock (an ADMIN: anybody's)" })
  async unlock(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return unlock(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'new bytes as a new minor version (1.0 → 1.1)' })
  async replaceResource(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of any version of the content' }) id: string,
    @Arg('input', () => ReplaceResourceInputNode, { description: 'the upload holding the new bytes' }) input: ReplaceResourceInputNode,
    @Ctx() context: RequestContext,
  ) {
    return replaceResource(await entryScope(context, repository), id, input);
  }
}
