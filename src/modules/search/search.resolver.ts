import { Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { EntriesPageNode, SearchOptionsInput } from '../entries/entry.types.js';
import { entryScope } from '../entries/scope-of-request.js';
import { searchByCondition } from './by-condition.js';
import { searchByProperties } from './by-properties.js';
import { searchByText } from './by-text.js';
import { PropertyFilter } from './inputs.js';

/**
 * The fields of a search input that were given: GraphQL lets a client write `null` for any optional
 * field, which here means absent, as in REST (a null filter field compiled to `= NULL`, and a null
 * orderBy failed with a TypeError's text).
 */
function given<T extends object>(input: T | null | undefined): T {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== null)) as T;
}

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
    return searchByProperties(await entryScope(context, repository), given(filter), given(options));
  }

  @Query(() => EntriesPageNode, { description: 'search by a condition (spec endpoint 2; the language: docs/search.md)' })
  async searchByCondition(
    @Arg('repository', () => String) repository: string,
    @Arg('condition', () => String) condition: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByCondition(await entryScope(context, repository), condition, given(options));
  }

  @Query(() => EntriesPageNode, { description: 'search by text: names and extracted text, most relevant first (spec endpoint 3; docs/search.md)' })
  async searchByText(
    @Arg('repository', () => String) repository: string,
    @Arg('searchText', () => String) searchText: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByText(await entryScope(context, repository), searchText, given(options));
  }
}
