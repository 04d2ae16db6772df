import { Field, ID, InputType, Int, InterfaceType, ObjectType } from 'type-graphql';
import { graphqlEnum } from '../../graphql/enums.js';
import { JSONObject, SafeInt } from '../../graphql/scalars.js';
import { entryTypes, versionStatuses, type EntryType, type VersionStatus } from './entry.entity.js';
import type { SearchOptions } from '../search/entry-query.js';

const orderingDirections = ['asc', 'desc'] as const;
// each enum's name is its values' type too, as a TypeScript enum's is
export type EntryTypeEnum = EntryType;
export type VersionStatusEnum = VersionStatus;
export type OrderingDirection = (typeof orderingDirections)[number];
export const EntryTypeEnum = graphqlEnum(entryTypes, {
  name: 'EntryType',
  description: 'the kind of an entry',
  valuesConfig: {
    CONTENT: { description: 'a versioned file with its metadata' },
    FOLDER: { description: 'a folder holding folders and contents' },
  },
});
export const VersionStatusEnum = graphqlEnum(versionStatuses, {
  name: 'VersionStatus',
  description: 'the status of a content version',
  valuesConfig: {
    WORKING_COPY: { description: 'the copy made by checkOut, which checkIn makes the next version' },
    CURRENT: { description: 'a checked-in version' },
  },
});
export const OrderingDirection = graphqlEnum(orderingDirections, {
  name: 'OrderingDirection',
  description: 'the direction of an order',
  valuesConfig: {
    asc: { description: 'ascending (the default)' },
    desc: { description: 'descending' },
  },
});

/**
 * Fields folders and contents share. Resolvers return Entry entities; the names match.
 *
 * The object types below are plain data: `simpleResolvers` gives their fields graphql's default
 * resolver instead of one through the global middlewares (a promise per field: a search page of 100
 * entries resolves ≈ 5,000 fields, docs/benchmarks.md). Their `@FieldResolver`s keep the middlewares.
 */
/** The GraphQL type of an entry, from its row: synchronous (a type name at once), see subgraphs/federated-schema.ts. */
const entryTypeName = (value: { entryType: string }) => (value.entryType === 'FOLDER' ? 'Folder' : 'Content');

@InterfaceType('Entry', { resolveType: entryTypeName, description: 'a folder or a content version of a repository' })
export abstract class EntryNode {
  @Field(() => ID, { description: 'the id of the folder, or of this version of the content' }) id!: string;
  @Field(() => ID, { description: 'the id its versions share (its first version\'s id)' }) chronicalId!: string;
  @Field(() => Boolean, { description: 'false when deactivated: a deleted content that restoreContent can bring back' }) active!: boolean;
  @Field(() => EntryTypeEnum, { description: 'CONTENT or FOLDER' }) entryType!: EntryTypeEnum;
  @Field(() => String, { description: '1 to 255 characters, unique among the active latest entries of its folder' }) name!: string;
  @Field(() => String, { description: "the user name of its owner: who created the folder, or the content's first version" }) owner!: string;
  @Field(() => Date, { description: 'when the folder, or this version of the content, was created' }) createdAt!: Date;
  @Field(() => String, { description: 'the user who created the folder, or this version of the content' }) createdBy!: string;
  @Field(() => Date, { description: 'when it last changed' }) lastModifiedAt!: Date;
  @Field(() => String, { description: 'the user who last changed it' }) lastModifiedBy!: string;
  @Field(() => String, { nullable: true, description: "the content's type (at most 128 characters); null when untyped, and for a folder" }) typeName?: string | null;
  @Field(() => [String], { description: 'its tags, each once (at most 256)' }) tags!: string[];
  @Field(() => JSONObject, { description: 'its custom properties (at most 64 KiB of JSON)' }) properties!: Record<string, unknown>;
  /** `access.svc.content.<repository>` */
  @Field(() => String, { description: 'the repository access holding it: access.svc.content.<repository>' }) partition!: string;
  @Field(() => FolderNode, { nullable: true, description: 'the folder holding it; null at the root level' }) parent?: FolderNode | null;
}

@ObjectType('Folder', { implements: EntryNode, simpleResolvers: true, description: 'a folder of a repository' })
export class FolderNode extends EntryNode {}

@ObjectType('ResourceSource', { simpleResolvers: true, description: "where a resource's bytes are stored" })
export class ResourceSourceNode {
  @Field(() => String, { description: 'the file-system source type' }) type!: string;
  @Field(() => ID, { description: "the resource's id" }) id!: string;
  @Field(() => String, { description: 'access.svc.content.<repository>' }) partition!: string;
  @Field(() => String, { description: 'relative storage path' }) path!: string;
}

@ObjectType('Resource', { simpleResolvers: true, description: 'the file data of a content version' })
export class ResourceNode {
  @Field(() => ID, { description: "the resource's id" }) id!: string;
  @Field(() => String, { description: "the file's name as uploaded (renaming the content does not change it)" }) name!: string;
  @Field(() => String, { description: 'the media type, as given or sniffed from the bytes' }) mimeType!: string;
  @Field(() => SafeInt, { description: 'bytes' }) fileSize!: number;
  @Field(() => String, { description: 'MD5 of the bytes, hex (the download ETag)' }) md5!: string;
  @Field(() => Date, { description: 'when the bytes were stored' }) created!: Date;
  @Field(() => String, { description: 'the user who stored the bytes' }) creator!: string;
  @Field(() => String, { description: 'access.svc.content.<repository>' }) partition!: string;
  @Field(() => ResourceSourceNode, { description: 'where the bytes are stored' }) resourceSource!: ResourceSourceNode;
  @Field(() => String, { description: 'where the bytes are (GET, with the session as Bearer or sessionId)' }) downloadUrl!: string;
}

@ObjectType('Content', { implements: EntryNode, simpleResolvers: true, description: 'a version of a content: a file with its metadata' })
export class ContentNode extends EntryNode {
  @Field(() => Date, { nullable: true, description: 'when the content was locked; null when it is not' }) lockedAt?: Date | null;
  @Field(() => String, { nullable: true, description: 'the user holding the lock; null when it is not locked' }) lockedBy?: string | null;
  @Field(() => String, { description: "the version label, major.minor (1.0, 1.1, 2.0); a working copy has its predecessor's" }) version!: string;
  @Field(() => VersionStatusEnum, { description: 'CURRENT, or WORKING_COPY while checked out' }) versionStatus!: VersionStatusEnum;
  @Field(() => String, { nullable: true, description: 'check-in comment' }) comment?: string | null;
  @Field(() => ContentNode, { nullable: true, description: 'the previous version (of a working copy: the version checked out); null for version 1.0' })
  predecessor?: ContentNode | null;
  @Field(() => ResourceNode, { nullable: true, description: 'its file data; null when it has none' }) resource?: ResourceNode | null;
}

@ObjectType('EntriesPage', { simpleResolvers: true, description: 'a page of entries (the EntriesResponse of the spec)' })
export class EntriesPageNode {
  @Field(() => Int, { description: 'all matches, not the page size' }) count!: number;
  @Field(() => Int, { description: 'milliseconds' }) duration!: number;
  @Field(() => [EntryNode], { description: 'the folders and contents of this page' }) entries!: EntryNode[];
}

@InputType('SearchOptions', { description: 'the parameters the three searches share' })
export class SearchOptionsInput implements SearchOptions {
  @Field(() => EntryTypeEnum, { nullable: true, description: 'only contents or only folders' }) entryType?: EntryTypeEnum;
  @Field(() => Boolean, { nullable: true, description: 'true: every version of each content, not only the latest' }) includeVersions?: boolean;
  @Field(() => String, { nullable: true, description: 'any property a condition can name except tags (e.g. name, parent.name, properties.<name>); missing values last' })
  orderBy?: string;
  @Field(() => OrderingDirection, { nullable: true, description: 'asc (default) or desc' }) orderingDirection?: OrderingDirection;
  @Field(() => Int, { nullable: true, description: 'default 100, at most 1000' }) limit?: number;
  @Field(() => Int, { nullable: true, description: 'default 0' }) offset?: number;
}
