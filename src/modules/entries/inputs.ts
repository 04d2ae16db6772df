import { Field, ID, InputType } from 'type-graphql';
import { JSONObject } from '../../graphql/scalars.js';
import type { CreateContentInput } from './contents.js';
import type { CopyContentInput } from './copy.js';
import type { CreateFolderInput } from './folders.js';
import type { UpdateContentInput, UpdateFolderInput } from './update.js';

/*
 * The GraphQL input types of the entry verbs: each verb declares its input next to itself, and each
 * class here only adds the GraphQL field declarations to it (`implements` keeps the two in step). The
 * REST layer derives its parsing from these GraphQL types (rest-compat/inputs.ts) and its TypeScript
 * types from the generated contract.
 */

@InputType('CreateFolderInput', { description: 'a new folder' })
export class CreateFolderInputNode implements CreateFolderInput {
  @Field(() => String, { description: '1 to 255 characters, unique among the active entries of the parent folder' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'the parent folder; absent, null or "" = the root' }) parentId?: string | null;
  @Field(() => [String], { nullable: true, description: "the folder's own tags (at most 256); an inheritance policy may add its parent's" }) tags?: string[] | null;
  @Field(() => JSONObject, { nullable: true, description: "the folder's own properties (at most 64 KiB of JSON); an inheritance policy may add its parent's" })
  properties?: Record<string, unknown> | null;
}

@InputType('CreateContentInput', { description: 'a new content over an upload' })
export class CreateContentInputNode implements CreateContentInput {
  @Field(() => ID, { description: 'the id answered by POST …/uploads' }) uploadId!: string;
  @Field(() => String, { nullable: true, description: "default: the uploaded file's name" }) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'the folder; absent, null or "" = the root' }) parentId?: string | null;
  @Field(() => String, { nullable: true, description: 'default: sniffed from the bytes' }) mimeType?: string | null;
  @Field(() => String, { nullable: true, description: "the content's type; default: the folder's default type policy, else none" }) typeName?: string | null;
  @Field(() => [String], { nullable: true, description: "the content's own tags (at most 256); an inheritance policy may add its folder's" }) tags?: string[] | null;
  @Field(() => JSONObject, { nullable: true, description: "the content's own properties (at most 64 KiB of JSON); an inheritance policy may add its folder's" })
  properties?: Record<string, unknown> | null;
}

@InputType('UpdateFolderInput', { description: 'absent fields stay as they are' })
export class UpdateFolderInputNode implements UpdateFolderInput {
  @Field(() => String, { nullable: true, description: 'the new name; null is refused' }) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'move: the new parent folder; null or "" = the root' }) parentId?: string | null;
  @Field(() => [String], { nullable: true, description: "replace the folder's tags; null or [] = none" }) tags?: string[] | null;
  @Field(() => JSONObject, {
    nullable: true,
    description: 'merged into the stored properties: a key set to null is removed; null removes them all',
  })
  properties?: Record<string, unknown> | null;
}

@InputType('UpdateContentInput', { description: 'absent fields stay as they are; the version does not change' })
export class UpdateContentInputNode implements UpdateContentInput {
  @Field(() => String, { nullable: true, description: 'the new name; null is refused' }) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'move: the new parent folder; null or "" = the root' }) parentId?: string | null;
  @Field(() => String, { nullable: true, description: 'null or "" = no type' }) typeName?: string | null;
  @Field(() => JSONObject, {
    nullable: true,
    description: 'merged into the stored properties: a key set to null is removed; null removes them all',
  })
  properties?: Record<string, unknown> | null;
}

@InputType('CopyContentInput', { description: 'where the copy goes and what it is called' })
export class CopyContentInputNode implements CopyContentInput {
  @Field(() => ID, { nullable: true, description: "absent: the original's folder; null or \"\" = the root" }) parentId?: string | null;
  @Field(() => String, { nullable: true, description: "default: the original's name" }) name?: string | null;
}
