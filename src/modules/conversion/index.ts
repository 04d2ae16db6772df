/** The conversion capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { ConversionResolver } from './conversion.resolver.js';
export { convertJobHandler } from './convert-job.js';
export { convertJobName, mergeJobName } from './operations.js';
export { mergeJobHandler } from './merge-job.js';
export type { MergeInput, MergeRequest, PdfMerger } from './pdf-merger.js';
export type { TargetFormat } from './operations.js';
export type { PageRenderer, RenderCallbacks, RenderDecision, RenderedPage, RenderRequest } from './page-renderer.js';
export { representationForDownload } from './representations.js';
export type { RepresentationRecord } from './representations.js';
export { requestThumbnail, submitLostThumbnails, thumbnailForDownload, thumbnailJobHandler, thumbnailJobName } from './thumbnails.js';
