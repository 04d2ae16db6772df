import { Field, ID, InputType } from 'type-graphql';
import { VersionStatusEnum } from '../entries/entry.types.js';
import type { PropertyFilter } from './by-properties.js';

/** The GraphQL input type of spec endpoint 1's property filters (see src/modules/entries/inputs.ts). */
@InputType('PropertyFilter', { description: 'an entry matches when it matches every given property' })
export class PropertyFilterNode implements PropertyFilter {
  @Field(() => ID, { nullable: true, description: "the content's chronicalId (the id its versions share)" }) chronicalId?: string;
  @Field(() => String, { nullable: true, description: 'created by this user' }) createdBy?: string;
  @Field(() => Boolean, { nullable: true, description: 'true: locked by anybody; false: not locked' }) isLocked?: boolean;
  @Field(() => String, { nullable: true, description: 'last changed by this user' }) lastModifiedBy?: string;
  @Field(() => String, { nullable: true, description: 'locked by this user' }) lockedBy?: string;
  @Field(() => String, { nullable: true, description: "the resource's media type, exactly" }) mimeType?: string;
  @Field(() => String, { nullable: true, description: 'this name (NFC-normalised, trimmed)' }) name?: string;
  @Field(() => String, { nullable: true, description: 'owned by this user' }) owner?: string;
  @Field(() => ID, { nullable: true, description: 'in this folder' }) parentId?: string;
  @Field(() => [String], { nullable: true, description: 'having every one of these tags (NFC-normalised)' }) tags?: string[];
  @Field(() => String, { nullable: true, description: 'this version label, e.g. 1.0' }) version?: string;
  @Field(() => VersionStatusEnum, { nullable: true, description: 'CURRENT, or WORKING_COPY (working copies are found only so)' }) versionStatus?: VersionStatusEnum;
}
