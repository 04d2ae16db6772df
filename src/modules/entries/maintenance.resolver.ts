import { Arg, Authorized, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { copyContent } from './copy.js';
import { deleteContent, deleteFolder, restoreContent } from './deletion.js';
import { ContentNode, FolderNode } from './entry.types.js';
import { CopyContentInput, UpdateContentInput, UpdateFolderInput } from './inputs.js';
import { entryScope } from './scope-of-request.js';
import { addTags, removeTags } from './tags.js';
import { updateContent, updateFolder } from './update.js';

/** Maintenance of folders and contents: update, move, delete, restore, copy, tags. */
@Authorized()
@Resolver()
export class MaintenanceResolver {
  @Mutation(() => FolderNode, { description: 'renames and/or moves a folder (409 when moved into its own subtree)' })
  async updateFolder(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateFolderInput) input: UpdateFolderInput,
    @Ctx() context: RequestContext,
  ) {
    return updateFolder(await entryScope(context, repository), id, input);
  }

  @Mutation(() => Boolean, { description: 'deletes a folder permanently; a non-empty one only with recursive: true (409 otherwise)' })
  async deleteFolder(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('recursive', () => Boolean, { nullable: true, defaultValue: false }) recursive: boolean,
    @Ctx() context: RequestContext,
  ) {
    await deleteFolder(await entryScope(context, repository), id, { recursive });
    return true;
  }

  @Mutation(() => ContentNode, { description: 'renames, moves, retypes or changes the properties of a content (same version)' })
  async updateContent(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateContentInput) input: UpdateContentInput,
    @Ctx() context: RequestContext,
  ) {
    return updateContent(await entryScope(context, repository), id, input);
  }

  @Mutation(() => Boolean, {
    description: 'deactivates a content (restorable); permanent: true purges every version and its bytes',
  })
  async deleteContent(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('permanent', () => Boolean, { nullable: true, defaultValue: false }) permanent: boolean,
    @Ctx() context: RequestContext,
  ) {
    await deleteContent(await entryScope(context, repository), id, { permanent });
    return true;
  }

  @Mutation(() => ContentNode, { description: 'makes a deactivated content active again' })
  async restoreContent(@Arg('repository', () => String) repository: string, @Arg('id', () => ID) id: string, @Ctx() context: RequestContext) {
    return restoreContent(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'a new content (version 1.0) with a copy of the bytes' })
  async copyContent(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => CopyContentInput, { nullable: true }) input: CopyContentInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return copyContent(await entryScope(context, repository), id, input ?? {});
  }

  @Mutation(() => ContentNode)
  async addTags(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('tags', () => [String]) tags: string[],
    @Ctx() context: RequestContext,
  ) {
    return addTags(await entryScope(context, repository), id, tags);
  }

  @Mutation(() => ContentNode)
  async removeTags(
    @Arg('repository', () => String) repository: string,
    @Arg('id', () => ID) id: string,
    @Arg('tags', () => [String]) tags: string[],
    @Ctx() context: RequestContext,
  ) {
    return removeTags(await entryScope(context, repository), id, tags);
  }
}
