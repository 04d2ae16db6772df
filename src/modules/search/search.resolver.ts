import { Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { EntriesPageNode, SearchOptionsInput } from '../entries/entry.types.js';
import { entryScope } from '../entries/scope-of-request.js';
import { searchByCondition } from './by-condition.js';
import { searchByProperties } from './by-properties.js';
import { searchByText } from './by-text.js';
import { PropertyFilter } from './inputs.js';

@Authorized()
@Resolver()
export class SearchResolver {
  @Query(() => EntriesPageNode, { description: 'search by properties (spec endpoint 1)' })
  async searchByProperties(
    @Arg('repository', () => String) repository: string,
    @Arg('filter', () => PropertyFilter, { nullable: true }) filter: PropertyFilter | undefined,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByProperties(await entryScope(context, repository), filter ?? {}, options ?? {});
  }

  @Query(() => EntriesPageNode, { description: 'search by a condition (spec endpoint 2; the language: docs/search.md)' })
  async searchByCondition(
    @Arg('repository', () => String) repository: string,
    @Arg('condition', () => String) condition: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByCondition(await entryScope(context, repository), condition, options ?? {});
  }

  @Query(() => EntriesPageNode, { description: 'search by text: names and extracted text, most relevant first (spec endpoint 3; docs/search.md)' })
  async searchByText(
    @Arg('repository', () => String) repository: string,
    @Arg('searchText', () => String) searchText: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByText(await entryScope(context, repository), searchText, options ?? {});
  }
}
