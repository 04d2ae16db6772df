/** The fulltext capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { extractTextJobHandler, reindexJobHandler, submitLostExtractions } from './extraction-job.js';
export type { ExtractedText, OcrSettings, TextExtractionRequest, TextExtractor } from './extraction-job.js';
export { FullTextResolver } from './fulltext.resolver.js';
export { extractTextJobName, reindexJobName } from './operations.js';
export { postgresTextIndex, resolveFullTextTerms } from './text-index.js';
