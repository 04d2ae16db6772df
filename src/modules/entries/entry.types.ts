import { Field, ID, InputType, Int, InterfaceType, ObjectType, registerEnumType } from 'type-graphql';
import { JSONObject, SafeInt } from '../../graphql/scalars.js';

export enum EntryTypeEnum { CONTENT = 'CONTENT', FOLDER = 'FOLDER' }
export enum VersionStatusEnum { WORKING_COPY = 'WORKING_COPY', CURRENT = 'CURRENT' }
export enum OrderingDirection { asc = 'asc', desc = 'desc' }
registerEnumType(EntryTypeEnum, { name: 'EntryType' });
registerEnumType(VersionStatusEnum, { name: 'VersionStatus' });
registerEnumType(OrderingDirection, { name: 'OrderingDirection' });

/**
 * Fields folders and contents share. Resolvers return Entry entities; the names match.
 *
 * The object types below are plain data: `simpleResolvers` gives their fields graphql's default
 * resolver instead of one through the global middlewares (a promise per field: a search page of 100
 * entries resolves ≈ 5,000 fields, docs/benchmarks.md). Their `@FieldResolver`s keep the middlewares.
 */
/** The GraphQL type of an entry, from its row: synchronous (a type name at once), see subgraphs/federated-schema.ts. */
const entryTypeName = (value: { entryType: string }) => (value.entryType === 'FOLDER' ? 'Folder' : 'Content');

@InterfaceType('Entry', { resolveType: entryTypeName })
export abstract class EntryNode {
  @Field(() => ID) id!: string;
  @Field(() => ID, { description: 'the id its versions share (its first version\'s id)' }) chronicalId!: string;
  @Field(() => Boolean) active!: boolean;
  @Field(() => EntryTypeEnum) entryType!: EntryTypeEnum;
  @Field(() => String) name!: string;
  @Field(() => String) owner!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String) createdBy!: string;
  @Field(() => Date) lastModifiedAt!: Date;
  @Field(() => String) lastModifiedBy!: string;
  @Field(() => String, { nullable: true }) typeName?: string | null;
  @Field(() => [String]) tags!: string[];
  @Field(() => JSONObject) properties!: Record<string, unknown>;
  /** `access.svc.content.<repository>` */
  @Field(() => String) partition!: string;
  @Field(() => FolderNode, { nullable: true }) parent?: FolderNode | null;
}

@ObjectType('Folder', { implements: EntryNode, simpleResolvers: true })
export class FolderNode extends EntryNode {}

@ObjectType('ResourceSource', { simpleResolvers: true })
export class ResourceSourceNode {
  @Field(() => String, { description: 'the file-system source type' }) type!: string;
  @Field(() => ID) id!: string;
  @Field(() => String) partition!: string;
  @Field(() => String, { description: 'relative storage path' }) path!: string;
}

@ObjectType('Resource', { simpleResolvers: true })
export class ResourceNode {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) mimeType!: string;
  @Field(() => SafeInt) fileSize!: number;
  @Field(() => String) md5!: string;
  @Field(() => Date) created!: Date;
  @Field(() => String) creator!: string;
  @Field(() => String) partition!: string;
  @Field(() => ResourceSourceNode) resourceSource!: ResourceSourceNode;
  @Field(() => String, { description: 'where the bytes are (GET, with the session as Bearer or sessionId)' }) downloadUrl!: string;
}

@ObjectType('Content', { implements: EntryNode, simpleResolvers: true })
export class ContentNode extends EntryNode {
  @Field(() => Date, { nullable: true }) lockedAt?: Date | null;
  @Field(() => String, { nullable: true }) lockedBy?: string | null;
  @Field(() => String) version!: string;
  @Field(() => VersionStatusEnum) versionStatus!: VersionStatusEnum;
  @Field(() => String, { nullable: true, description: 'check-in comment' }) comment?: string | null;
  @Field(() => ContentNode, { nullable: true }) predecessor?: ContentNode | null;
  @Field(() => ResourceNode, { nullable: true }) resource?: ResourceNode | null;
}

@ObjectType('EntriesPage', { simpleResolvers: true })
export class EntriesPageNode {
  @Field(() => Int, { description: 'all matches, not the page size' }) count!: number;
  @Field(() => Int, { description: 'milliseconds' }) duration!: number;
  @Field(() => [EntryNode]) entries!: EntryNode[];
}

@InputType('SearchOptions', { description: 'the parameters the three searches share' })
export class SearchOptionsInput {
  @Field(() => EntryTypeEnum, { nullable: true }) entryType?: EntryTypeEnum;
  @Field(() => Boolean, { nullable: true }) includeVersions?: boolean;
  @Field(() => String, { nullable: true }) orderBy?: string;
  @Field(() => OrderingDirection, { nullable: true }) orderingDirection?: OrderingDirection;
  @Field(() => Int, { nullable: true, description: 'default 100, at most 1000' }) limit?: number;
  @Field(() => Int, { nullable: true, description: 'default 0' }) offset?: number;
}
