import type { EntryScope } from '../entries/scope.js';
import { compileCondition } from './condition/compile.js';
import { parseCondition } from './condition/parser.js';
import { runEntryQuery, type EntriesPage, type SearchOptions } from './entry-query.js';

/** Spec endpoint 2: the entries a condition (DESIGN §6, docs/search.md) matches. */
export async function searchByCondition(scope: EntryScope, condition: string, options: SearchOptions): Promise<EntriesPage> {
  const predicate = compileCondition(parseCondition(condition), {
    fullTextEnabled: scope.repository.fullTextEnabled,
    repositoryName: scope.repository.name,
  });
  return runEntryQuery(scope, [predicate], options);
}
