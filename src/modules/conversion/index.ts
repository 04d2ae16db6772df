/** The conversion capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { ConversionResolver } from './conversion.resolver.js';
export { checkInputFiles, checkPdfPageCount, decidePdf } from './limits.js';
export type { PdfDecision } from './limits.js';
export { convertJobName, mimeTypeOf, parseSpecification, resultName } from './operations.js';
export type { ResultAction, TargetFormat } from './operations.js';
export { recordRepresentation, representationForDownload, representationId, representationsOf } from './representations.js';
export type { RepresentationRecord } from './representations.js';
