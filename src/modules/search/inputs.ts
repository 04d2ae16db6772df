import { Field, ID, InputType } from 'type-graphql';
import { VersionStatusEnum } from '../entries/entry.types.js';

/** Spec endpoint 1's property filters, declared once (see src/modules/entries/inputs.ts). */
@InputType('PropertyFilter', { description: 'an entry matches when it matches every given property' })
export class PropertyFilter {
  @Field(() => ID, { nullable: true }) chronicalId?: string;
  @Field(() => String, { nullable: true }) createdBy?: string;
  @Field(() => Boolean, { nullable: true }) isLocked?: boolean;
  @Field(() => String, { nullable: true }) lastModifiedBy?: string;
  @Field(() => String, { nullable: true }) lockedBy?: string;
  @Field(() => String, { nullable: true }) mimeType?: string;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) owner?: string;
  @Field(() => ID, { nullable: true }) parentId?: string;
  @Field(() => [String], { nullable: true }) tags?: string[];
  @Field(() => String, { nullable: true }) version?: string;
  @Field(() => VersionStatusEnum, { nullable: true }) versionStatus?: VersionStatusEnum;
}
