/** The conversion capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { ConversionResolver } from './conversion.resolver.js';
export { convertJobHandler } from './convert-job.js';
export { convertJobName } from './operations.js';
export type { TargetFormat } from './operations.js';
export type { PageRenderer, RenderCallbacks, RenderDecision, RenderedPage, RenderRequest } from './page-renderer.js';
export { representationForDownload } from './representations.js';
