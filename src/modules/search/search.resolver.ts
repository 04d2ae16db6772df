import { Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { EntriesPageNode, SearchOptionsInput } from '../entries/entry.types.js';
import { entryScope } from '../entries/scope-of-request.js';
import { searchByCondition } from './by-condition.js';
import { searchByProperties } from './by-properties.js';
import { searchByText } from './by-text.js';
import { PropertyFilterNode } from './inputs.js';

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
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('filter', () => PropertyFilterNode, { nullable: true, description: 'the properties to match; none: every entry' }) filter: PropertyFilterNode | undefined,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByProperties(await entryScope(context, repository), given(filter), given(options));
  }

  @Query(() => EntriesPageNode, { description: 'search by a condition (spec endpoint 2; the language: docs/search.md)' })
  async searchByCondition(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('condition', () => String, { description: "a WHERE-style condition, e.g. parent.name = 'reports' and 'red' in tags (at most 10,000 characters)" }) condition: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByCondition(await entryScope(context, repository), condition, given(options));
  }

  @Query(() => EntriesPageNode, { description: 'search by text: names and extracted text, most relevant first (spec endpoint 3; docs/search.md)' })
  async searchByText(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('searchText', () => String, { description: 'words, "phrases", -exclusions, or and prefix* (1 to 1,000 characters)' }) searchText: string,
    @Arg('options', () => SearchOptionsInput, { nullable: true, description: 'the shared search parameters: entry type, versions, order, paging' }) options: SearchOptionsInput | undefined,
    @Ctx() context: RequestContext,
  ) {
    return searchByText(await entryScope(context, repository), searchText, given(options));
  }
}
