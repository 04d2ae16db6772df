/** The entries capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { nameClash, nameTaken } from './chronicles.js';
export { contentForDownload, createContent, getContent } from './contents.js';
export { ContentsResolver } from './contents.resolver.js';
export { ContentResolver, EntryResolver, FolderChildrenResolver, FolderResolver } from './entries.resolver.js';
export { Entry, Resource } from './entry.entity.js';
export { ContentNode, EntryTypeEnum, FolderNode } from './entry.types.js';
export { getFolder } from './folders.js';
export { MaintenanceResolver } from './maintenance.resolver.js';
export { requireEntry } from './queries.js';
export type { EntryRead } from './read.js';
export type { EntryScope } from './scope.js';
export type { CreatedContent, NewContentInput } from './contents.js';
export type { ReceivedBytes, StagedUpload, StageOptions, UploadInput } from './uploads.js';
export { entryScope } from './scope-of-request.js';
export { entryView } from './views.js';
export { discardReceived, discardUpload, maxUploadBodyBytes, receiveUpload, refuseDeclaredMultipartLength, stageUpload, sweepPendingUploads, sweepUnreferencedFiles, uploadLifetimeMs } from './uploads.js';
