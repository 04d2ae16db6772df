import { partitionOf } from '../repositories/operations.js';
import type { Entry, Resource } from './entry.entity.js';

export const fileSystemSourceType = 'com.svc.model.resource.FileSystemResourceSource';

export interface ResourceView {
  id: string;
  name: string;
  mimeType: string;
  fileSize: number;
  md5: string;
  created: Date;
  creator: string;
  partition: string;
  resourceSource: { type: string; id: string; partition: string; path: string };
  downloadUrl: string;
}

export function contentPath(basePath: string, repositoryId: string, contentId: string): string {
  return `${basePath}/api/v1/${partitionOf(repositoryId)}/v1/content/${encodeURIComponent(contentId)}`;
}

/** Where a page image's bytes are (GET C/representations/{id}/download, DESIGN §4). */
export function representationDownloadPath(basePath: string, repositoryId: string, representationId: string): string {
  return `${basePath}/api/v1/${partitionOf(repositoryId)}/v1/representations/${encodeURIComponent(representationId)}/download`;
}

/** The Resource of the spec, as seen through one content version. */
export function resourceView(resource: Resource, content: Entry, basePath: string): ResourceView {
  const partition = partitionOf(resource.repositoryId);
  return {
    id: resource.id,
    name: resource.name,
    mimeType: resource.mimeType,
    fileSize: resource.fileSize,
    md5: resource.md5,
    created: resource.createdAt,
    creator: resource.creator,
    partition,
    resourceSource: { type: fileSystemSourceType, id: resource.id, partition, path: resource.storagePath },
    downloadUrl: `${contentPath(basePath, content.repositoryId, content.id)}/download`,
  };
}
