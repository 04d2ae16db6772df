/** The search capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { propertyPredicates, searchByProperties, type PropertyFilter } from './by-properties.js';
export { searchByCondition } from './by-condition.js';
export { searchByText } from './by-text.js';
export { entriesPageView, type EntriesPageView } from './page-view.js';
export { compileCondition } from './condition/compile.js';
export { fullTextTexts, parseCondition } from './condition/parser.js';
export { buildEntryQuery, maxLimit } from './entry-query.js';
export type { EntriesPage, EntryQuery, RunStatement, SearchOptions, SearchScope, Statement } from './entry-query.js';
export { SearchResolver } from './search.resolver.js';
export { buildVisibleWordsQuery, creationPage, matchSpread, type WordCounts } from './visible-words.js';
