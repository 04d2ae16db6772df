import type { EntryScope } from '../entries/scope.js';
import { requireFullText } from '../fulltext/operations.js';
import { relevanceOrder } from '../fulltext/query.js';
import { textIndexOf } from '../fulltext/text-index.js';
import { onlyVisibleByDefault, runEntryQuery, withReadableAcls, type EntriesPage, type SearchOptions } from './entry-query.js';
import { searchVisibleWords, visibleWordsAnswer } from './visible-words.js';

/** Spec endpoint 3: the entries whose name or text match `searchText` (docs/search.md), most relevant first unless `orderBy` says otherwise. */
export async function searchByText(caller: EntryScope, searchText: string, options: SearchOptions): Promise<EntriesPage> {
  requireFullText(caller);
  const scope = await withReadableAcls(caller);
  if (visibleWordsAnswer(scope, options)) return searchVisibleWords(scope, searchText, options, 'relevance');
  const order = relevanceOrder(searchText);
  // the match's query runs as the search's own statement, under its timeout
  return runEntryQuery(scope, async (run) => [await textIndexOf(scope.services.config).match(run, scope.repository.id, searchText, onlyVisibleByDefault(options))], options, order);
}
