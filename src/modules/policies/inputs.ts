import { Field, InputType } from 'type-graphql';
import type { CreateContentTypeInput, CreateDefaultTypePolicyInput, CreateInheritancePolicyInput, CreateTypeRestrictionPolicyInput } from './operations.js';

/* The GraphQL input types of spec endpoints 6–8 (one per policy kind; REST fills them from form fields) and of the type registry, over their verbs' inputs. */

@InputType('CreateDefaultTypePolicyInput', { description: 'a default type policy: content created without a type in its folders gets this one' })
export class CreateDefaultTypePolicyInputNode implements CreateDefaultTypePolicyInput {
  @Field(() => String, { description: '1 to 255 characters' }) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => String, { description: 'any type name, as contents carry them (registered with POST A/type or not)' }) defaultTypeName!: string;
}

@InputType('CreateInheritancePolicyInput', { description: 'each flag defaults to true' })
export class CreateInheritancePolicyInputNode implements CreateInheritancePolicyInput {
  @Field(() => String, { description: '1 to 255 characters' }) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => Boolean, { nullable: true, description: "false: the folder's ACL does not reach its children (DESIGN §10; they keep only their own entries)" }) inheritAcl?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'recorded only: the service has no classifications yet' }) inheritClassification?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "entries created in the folder get the folder's properties they do not set themselves" })
  inheritCommonProperties?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "false: the policies of the folder and above do not reach its subfolders" }) inheritPolicies?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "entries created in the folder get the folder's tags too" }) inheritTags?: boolean | null;
}

@InputType('CreateTypeRestrictionPolicyInput', { description: 'a type restriction: contents of a type it refuses cannot be created, moved, retyped, copied or checked in in its folders' })
export class CreateTypeRestrictionPolicyInputNode implements CreateTypeRestrictionPolicyInput {
  @Field(() => String, { description: '1 to 255 characters' }) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => String, { nullable: true, description: 'free text kept with the policy' }) description?: string | null;
  @Field(() => [String], { nullable: true, description: 'when given, only these types (and subtypes with includeSubTypes)' }) allowedTypeNames?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'these types are refused (and subtypes with includeSubTypes)' }) deniedTypeNames?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: 'default: true' }) includeSubTypes?: boolean | null;
}

@InputType('CreateContentTypeInput', { description: 'a new type of the registry' })
export class CreateContentTypeInputNode implements CreateContentTypeInput {
  @Field(() => String, { description: '1 to 128 letters, digits or : . _ -; unique' }) name!: string;
  @Field(() => String, { nullable: true, description: 'a registered type it is a subtype of; default: none' }) parentTypeName?: string | null;
}
