import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { partitionOf, repositoryNameOf } from '../repositories/operations.js';
import { children, home } from '../search/by-properties.js';
import type { PageEntry } from '../search/entry-query.js';
import type { Entry } from './entry.entity.js';
import { ContentNode, EntriesPageNode, EntryNode, FolderNode, ResourceNode, SearchOptionsInput } from './entry.types.js';
import { createFolder, getFolder } from './folders.js';
import { CreateFolderInputNode } from './inputs.js';
import { readableParent, readEntry, type EntryRead } from './read.js';
import { entryScope, hasThumbnail, loadEntry, loadResource } from './scope-of-request.js';
import { contentPath, resourceView } from './views.js';

@Authorized()
@Resolver(() => EntryNode)
export class EntryResolver {
  @FieldResolver(() => String)
  partition(@Root() entry: Entry): string {
    return partitionOf(entry.repositoryId);
  }

  /** The folder, unless the caller may not read it (then it is not there for them, DESIGN §10: null). */
  @FieldResolver(() => FolderNode, { nullable: true })
  async parent(@Root() entry: Entry & Partial<PageEntry>, @Ctx() context: RequestContext): Promise<Entry | PageEntry['preloaded']['parent']> {
    const parent = entry.preloaded ? entry.preloaded.parent : entry.parentId ? ((await loadEntry(context, entry.parentId)) ?? null) : null;
    return readableParent(await entryScope(context, repositoryNameOf(entry.repositoryId)), parent);
  }
}

@Authorized()
@Resolver(() => ContentNode)
export class ContentResolver {
  /** Of the same chronicle, so under the same ACL as the version asked for. */
  @FieldResolver(() => ContentNode, { nullable: true })
  async predecessor(@Root() entry: Entry & Partial<EntryRead>, @Ctx() context: RequestContext): Promise<Entry | EntryRead | null> {
    if (entry.preloaded?.predecessor !== undefined) return entry.preloaded.predecessor;
    return entry.predecessorId ? ((await loadEntry(context, entry.predecessorId)) ?? null) : null;
  }

  @FieldResolver(() => ResourceNode, { nullable: true })
  async resource(@Root() entry: Entry & Partial<PageEntry>, @Ctx() context: RequestContext) {
    const resource = entry.preloaded ? entry.preloaded.resource : entry.resourceId ? await loadResource(context, entry.resourceId) : null;
    return resource ? resourceView(resource, entry, context.services.config.BASE_PATH) : null;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'where its first-page thumbnail is (PNG, at most 256 px a side; GET, as downloadUrl): null until it is made, and for kinds that have none (DESIGN §12)',
  })
  async thumbnailUrl(@Root() entry: Entry, @Ctx() context: RequestContext): Promise<string | null> {
    return (await hasThumbnail(context, entry.id)) ? `${contentPath(context.services.config.BASE_PATH, entry.repositoryId, entry.id)}/thumbnail` : null;
  }
}

@Authorized()
@Resolver(() => FolderNode)
export class FolderChildrenResolver {
  /** The virtual `Folder.children` of the spec: only computed when a client selects it. */
  @FieldResolver(() => EntriesPageNode, { description: 'the entries of this folder, folders first (the virtual Folder.children)' })
  async children(
    @Root() folder: Entry,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return children(await entryScope(context, repositoryNameOf(folder.repositoryId)), folder.id, options ?? {});
  }
}

@Authorized()
@Resolver()
export class FolderResolver {
  @Query(() => EntriesPageNode, { description: 'root-level entries, folders first' })
  async home(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return home(await entryScope(context, repository), options ?? {});
  }

  @Query(() => EntryNode, { description: 'a folder or a content version by id' })
  async entry(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the folder or content version' }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return readEntry(await entryScope(context, repository), id);
  }

  @Query(() => FolderNode, { description: 'a folder by id' })
  async folder(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the folder's id" }) id: string,
    @Ctx() context: RequestContext,
  ) {
    return getFolder(await entryScope(context, repository), id);
  }

  @Query(() => EntriesPageNode, { description: 'the entries of a folder, folders first' })
  async folderChildren(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: "the folder's id" }) id: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return children(await entryScope(context, repository), id, options ?? {});
  }

  @Mutation(() => FolderNode, { description: 'a new folder, at the root or in a folder' })
  async createFolder(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('input', () => CreateFolderInputNode, { description: 'its name, parent folder, tags and properties' }) input: CreateFolderInputNode,
    @Ctx() context: RequestContext,
  ) {
    return createFolder(await entryScope(context, repository), input);
  }
}
