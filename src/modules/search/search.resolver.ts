import { Arg, Authorized, Ctx, Field, ID, InputType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { EntriesPageNode, SearchOptionsInput, VersionStatusEnum } from '../entries/entry.types.js';
import { entryScope } from '../entries/scope-of-request.js';
import { searchByProperties } from './by-properties.js';

@InputType('PropertyFilter', { description: 'an entry matches when it matches every given property' })
class PropertyFilterInput {
  @Field(() => String, { nullable: true }) chronicalId?: string;
  @Field(() => String, { nullable: true }) createdBy?: string;
  @Field(() => Boolean, { nullable: true }) isLocked?: boolean;
  @Field(() => String, { nullable: true }) lastModifiedBy?: string;
  @Field(() => String, { nullable: true }) lockedBy?: string;
  @Field(() => String, { nullable: true }) mimeType?: string;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) owner?: string;
  @Field(() => ID, { nullable: true }) parentId?: string;
  @Field(() => [String], { nullable: true }) tags?: string[];
  @Field(() => String, { nullable: true }) version?: string;
  @Field(() => VersionStatusEnum, { nullable: true }) versionStatus?: VersionStatusEnum;
}

@Authorized()
@Resolver()
export class SearchResolver {
  @Query(() => EntriesPageNode, { description: 'search by properties (spec endpoint 1)' })
  async searchByProperties(
    @Arg('repository', () => String) repository: string,
    @Arg('filter', () => PropertyFilterInput, { nullable: true }) filter: PropertyFilterInput | undefined,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByProperties(await entryScope(context, repository), filter ?? {}, options ?? {});
  }
}
