import type { EntryScope } from '../entries/scope.js';
import { requireFullText } from '../fulltext/operations.js';
import { fullTextMatch, relevanceOrder } from '../fulltext/query.js';
import { runEntryQuery, type EntriesPage, type SearchOptions } from './entry-query.js';

/** Spec endpoint 3: the entries whose name or text match `searchText` (docs/search.md), most relevant first unless `orderBy` says otherwise. */
export async function searchByText(scope: EntryScope, searchText: string, options: SearchOptions): Promise<EntriesPage> {
  requireFullText(scope);
  return runEntryQuery(scope, [fullTextMatch(searchText)], options, relevanceOrder(searchText));
}
