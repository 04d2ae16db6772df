import type { PlainRecord } from '../../db/plain-rows.js';
import { partitionOf } from '../repositories/operations.js';
import type { EntryRecord } from '../search/entry-query.js';
import type { Entry, Resource } from './entry.entity.js';
import type { EntryRead } from './read.js';

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
  downloadUrl: string;
  resourceSource: { type: string; id: string; partition: string; path: string };
}

export function contentPath(basePath: string, repositoryId: string, contentId: string): string {
  return `${basePath}/api/v1/${partitionOf(repositoryId)}/v1/content/${encodeURIComponent(contentId)}`;
}

/** Where a page image's bytes are (GET C/representations/{id}/download, DESIGN §4). */
export function representationDownloadPath(basePath: string, repositoryId: string, representationId: string): string {
  return `${basePath}/api/v1/${partitionOf(repositoryId)}/v1/representations/${encodeURIComponent(representationId)}/download`;
}

/** The Resource of the spec, as seen through one content version. */
export function resourceView(resource: PlainRecord<Resource>, content: Pick<Entry, 'repositoryId' | 'id'>, basePath: string): ResourceView {
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
    downloadUrl: `${contentPath(basePath, content.repositoryId, content.id)}/download`,
    resourceSource: { type: fileSystemSourceType, id: resource.id, partition, path: resource.storagePath },
  };
}

/**
 * The fields of an entry that GraphQL's Folder shows (and Content begins with), then `rest`'s. Objects
 * are built as literals and `Object.assign`, never spread: on this Node an object spread cost 3–8 µs of
 * CPU against 0.05, and a page of 100 entries spread about a thousand (docs/benchmarks.md, "the page
 * shaped in one pass").
 */
function withFolderFields<Rest extends object>(entry: EntryRecord, rest: Rest) {
  return Object.assign(
    {
      id: entry.id,
      chronicalId: entry.chronicalId,
      active: entry.active,
      entryType: entry.entryType,
      name: entry.name,
      owner: entry.owner,
      createdAt: entry.createdAt,
      createdBy: entry.createdBy,
      lastModifiedAt: entry.lastModifiedAt,
      lastModifiedBy: entry.lastModifiedBy,
    },
    rest,
  );
}

const folderView = (folder: EntryRecord) => withFolderFields(folder, { typeName: folder.typeName, tags: folder.tags, properties: folder.properties, partition: partitionOf(folder.repositoryId) });

/** A content version's own fields, as GraphQL's Content shows them, in the order the REST documents select them. */
const contentView = (content: EntryRead, basePath: string) =>
  withFolderFields(content, {
    lockedAt: content.lockedAt,
    lockedBy: content.lockedBy,
    version: content.version,
    versionStatus: content.versionStatus,
    typeName: content.typeName,
    tags: content.tags,
    properties: content.properties,
    partition: partitionOf(content.repositoryId),
    comment: content.comment,
    resource: content.preloaded.resource && resourceView(content.preloaded.resource, content, basePath),
    parent: content.preloaded.parent && folderView(content.preloaded.parent),
  });

/**
 * An entry read by the read verb as the API shows it: the fields of GraphQL's Folder or Content with
 * what their field resolvers answer (partition, parent, resource, predecessor), one level deep as read.
 * REST answers it without running GraphQL (rest-compat, the hot reads); the test of the hot reads holds
 * it to what the GraphQL types answer.
 */
export function entryView(entry: EntryRead, basePath: string): Record<string, unknown> {
  if (entry.entryType === 'FOLDER') return Object.assign(folderView(entry), { parent: entry.preloaded.parent && folderView(entry.preloaded.parent) });
  const predecessor = entry.preloaded.predecessor;
  return Object.assign(contentView(entry, basePath), { predecessor: predecessor && contentView(predecessor, basePath) });
}
