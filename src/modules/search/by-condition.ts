import type { EntryScope } from '../entries/scope.js';
import { compileCondition } from './condition/compile.js';
import { fullTextTexts, namedProperties, parseCondition } from './condition/parser.js';
import { resolveFullTextTerms, textIndexOf } from '../fulltext/text-index.js';
import { onlyVisibleByDefault, runEntryQuery, withReadableAcls, type EntriesPage, type SearchOptions } from './entry-query.js';
import { searchVisibleWords, visibleWordsAnswer } from './visible-words.js';

/** Spec endpoint 2: the entries a condition (DESIGN §6, docs/search.md) matches. */
export async function searchByCondition(caller: EntryScope, condition: string, givenOptions: SearchOptions): Promise<EntriesPage> {
  const parsed = parseCondition(condition);
  const scope = await withReadableAcls(caller);
  // DESIGN §5: working copies appear when asked for; a condition asks by naming `versionStatus`, and
  // for deactivated entries (to find what to restore) by naming `active`
  const named = namedProperties(parsed);
  const options = {
    ...givenOptions,
    ...(named.includes('versionStatus') && { includeWorkingCopies: true }),
    ...(named.includes('active') && { includeInactive: true }),
  };
  if (parsed.type === 'fullText' && scope.repository.fullTextEnabled && visibleWordsAnswer(scope, options)) {
    return searchVisibleWords(scope, parsed.text, options, 'created');
  }
  // the fullText() terms are resolved by the search's own statements, under its timeout
  return runEntryQuery(
    scope,
    async (run) => {
      const fullTextTerms = scope.repository.fullTextEnabled
        ? await resolveFullTextTerms(textIndexOf(scope.services.config), run, scope.repository.id, fullTextTexts(parsed), onlyVisibleByDefault(options))
        : undefined;
      return [
        compileCondition(parsed, {
          fullTextEnabled: scope.repository.fullTextEnabled,
          repositoryId: scope.repository.id,
          repositoryName: scope.repository.name,
          fullTextTerms,
        }),
      ];
    },
    options,
  );
}
