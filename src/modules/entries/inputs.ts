import { Field, ID, InputType } from 'type-graphql';
import { JSONObject } from '../../graphql/scalars.js';

/*
 * The one declaration of each verb's input: TypeGraphQL makes the GraphQL input type of it, the
 * operations take it as their parameter type, and the REST layer derives its parsing from the GraphQL
 * type (rest-compat/inputs.ts) and its TypeScript types from the generated contract.
 */

@InputType('CreateFolderInput', { description: 'a new folder' })
export class CreateFolderInput {
  @Field(() => String, { description: '1 to 255 characters, unique among the active entries of the parent folder' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'the parent folder; absent, null or "" = the root' }) parentId?: string | null;
  /** what an inheritance policy hands down to the entries created in the folder (docs/administration.md) */
  @Field(() => [String], { nullable: true, description: "the folder's own tags (at most 256); an inheritance policy may add its parent's" }) tags?: string[] | null;
  @Field(() => JSONObject, { nullable: true, description: "the folder's own properties (at most 64 KiB of JSON); an inheritance policy may add its parent's" })
  properties?: Record<string, unknown> | null;
}

@InputType('CreateContentInput', { description: 'a new content over an upload' })
export class CreateContentInput {
  @Field(() => ID, { description: 'the id answered by POST …/uploads' }) uploadId!: string;
  @Field(() => String, { nullable: true, description: "default: the uploaded file's name" }) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'the folder; absent, null or "" = the root' }) parentId?: string | null;
  @Field(() => String, { nullable: true, description: 'default: sniffed from the bytes' }) mimeType?: string | null;
  @Field(() => String, { nullable: true, description: "the content's type; default: the folder's default type policy, else none" }) typeName?: string | null;
  @Field(() => [String], { nullable: true, description: "the content's own tags (at most 256); an inheritance policy may add its folder's" }) tags?: string[] | null;
  @Field(() => JSONObject, { nullable: true, description: "the content's own properties (at most 64 KiB of JSON); an inheritance policy may add its folder's" })
  properties?: Record<string, unknown> | null;
}

/** `parentId` null or '' = move to the root. `tags` replace the folder's; `properties` merge as for a content. */
@InputType('UpdateFolderInput', { description: 'absent fields stay as they are' })
export class UpdateFolderInput {
  @Field(() => String, { nullable: true, description: 'the new name; null is refused' }) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'move: the new parent folder; null or "" = the root' }) parentId?: string | null;
  @Field(() => [String], { nullable: true, description: "replace the folder's tags; null or [] = none" }) tags?: string[] | null;
  @Field(() => JSONObject, {
    nullable: true,
    description: 'merged into the stored properties: a key set to null is removed; null removes them all',
  })
  properties?: Record<string, unknown> | null;
}

/**
 * What PATCH may change. `undefined` = leave as is. `parentId` null or '' = move to the root.
 * `typeName` null or '' = no type. `properties` is merged into the stored ones (RFC 7396 at the top
 * level: a key given `null` is removed; `properties: null` removes them all).
 */
@InputType('UpdateContentInput', { description: 'absent fields stay as they are; the version does not change' })
export class UpdateContentInput {
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
export class CopyContentInput {
  /** undefined: the folder of the original; null or '': the root */
  @Field(() => ID, { nullable: true, description: "absent: the original's folder; null or \"\" = the root" }) parentId?: string | null;
  /** default: the name of the original (so a copy into the same folder needs a new name: 409 otherwise) */
  @Field(() => String, { nullable: true, description: "default: the original's name" }) name?: string | null;
}
