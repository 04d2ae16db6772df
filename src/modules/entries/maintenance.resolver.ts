import { Arg, Authorized, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { copyContent } from './copy.js';
import { deleteContent, deleteFolder, restoreContent } from './deletion.js';
import { ContentNode, FolderNode } from './entry.types.js';
import { CopyContentInputNode, UpdateContentInputNode, UpdateFolderInputNode } from './inputs.js';
import { entryScope } from './scope-of-request.js';
import { addTags, removeTags } from './tags.js';
import { updateContent, updateFolder } from './update.js';

/** Maintenance of folders and contents: update, move, delete, restore, copy, tags. */
@Authorized()
@Resolver()
export class MaintenanceResolver {
  @Mutation(() => FolderNode, { description: 'renames and/or moves a folder (409 when moved into its own subtree)' })
  async updateFolder(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the folder's id" }) id: string,
    @Arg('input', () => UpdateFolderInputNode, { description: 'what changes' }) input: UpdateFolderInputNode,
    @Ctx() context: RequestContext,
  ) {
    return updateFolder(await entryScope(context, repository), id, input);
  }

  @Mutation(() => Boolean, { description: 'deletes a folder permanently; a non-empty one only with recursive: true (409 otherwise)' })
  async deleteFolder(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the folder's id" }) id: string,
    @Arg('recursive', () => Boolean, { nullable: true, defaultValue: false, description: 'true: a non-empty folder goes too, with everything below it (contents purged)' }) recursive: boolean,
    @Ctx() context: RequestContext,
  ) {
    await deleteFolder(await entryScope(context, repository), id, { recursive });
    return true;
  }

  @Mutation(() => ContentNode, { description: 'renames, moves, retypes or changes the properties of a content (same version)' })
  async updateContent(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the latest version's id, or the working copy's while checked out" }) id: string,
    @Arg('input', () => UpdateContentInputNode, { description: 'what changes' }) input: UpdateContentInputNode,
    @Ctx() context: RequestContext,
  ) {
    return updateContent(await entryScope(context, repository), id, input);
  }

  @Mutation(() => Boolean, {
    description: 'deactivates a content (restorable); permanent: true purges every version and its bytes',
  })
  async deleteContent(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "any version's id; the working copy's cancels the check-out instead" }) id: string,
    @Arg('permanent', () => Boolean, { nullable: true, defaultValue: false, description: 'true: purge every version and its bytes instead of deactivating' }) permanent: boolean,
    @Ctx() context: RequestContext,
  ) {
    await deleteContent(await entryScope(context, repository), id, { permanent });
    return true;
  }

  @Mutation(() => ContentNode, { description: 'makes a deactivated content active again' })
  async restoreContent(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "any version's id" }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return restoreContent(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'a new content (version 1.0) with a copy of the bytes' })
  async copyContent(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the version to copy' }) id: string,
    @Arg('input', () => CopyContentInputNode, { nullable: true, description: "the copy's folder and name (default: the original's)" }) input: CopyContentInputNode | undefined,
    @Ctx() context: RequestContext,
  ) {
    return copyContent(await entryScope(context, repository), id, input ?? {});
  }

  @Mutation(() => ContentNode, { description: 'adds tags to a content (those it has stay once)' })
  async addTags(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the latest version's id, or the working copy's while checked out" }) id: string,
    @Arg('tags', () => [String], { description: 'the tags to add, at least one (an entry has at most 256)' }) tags: string[],
    @Ctx() context: RequestContext,
  ) {
    return addTags(await entryScope(context, repository), id, tags);
  }

  @Mutation(() => ContentNode, { description: 'removes tags from a content' })
  async removeTags(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the latest version's id, or the working copy's while checked out" }) id: string,
    @Arg('tags', () => [String], { description: 'the tags to remove, at least one (those it lacks are ignored)' }) tags: string[],
    @Ctx() context: RequestContext,
  ) {
    return removeTags(await entryScope(context, repository), id, tags);
  }
}
