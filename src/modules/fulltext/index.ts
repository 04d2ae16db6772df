/** The fulltext capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { readHead, textKindOf } from './extract.js';
export type { TextKind } from './extract.js';
export { FullTextResolver } from './fulltext.resolver.js';
export { clearExtractionFailures, countFailedResources, countResourcesWithoutText, dequeue, dropQueued, extractTextJobName, markExtractionFailures, queuedWithoutJob, reindexJobName, resourcesWithoutText, submitExtraction, takeQueuedResources } from './operations.js';
export type { ResourceText, ResourceToIndex } from './operations.js';
export { postgresTextIndex, resolveFullTextTerms, textIndexOf } from './text-index.js';
