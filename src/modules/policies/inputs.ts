import { Field, InputType } from 'type-graphql';

/* Spec endpoints 6–8: one input per policy kind (REST fills them from form fields). */

@InputType('CreateDefaultTypePolicyInput')
export class CreateDefaultTypePolicyInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => String, { description: 'a type of the registry (POST A/type)' }) defaultTypeName!: string;
}

@InputType('CreateInheritancePolicyInput', { description: 'each flag defaults to true' })
export class CreateInheritancePolicyInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => Boolean, { nullable: true }) inheritAcl?: boolean | null;
  @Field(() => Boolean, { nullable: true }) inheritClassification?: boolean | null;
  @Field(() => Boolean, { nullable: true }) inheritCommonProperties?: boolean | null;
  @Field(() => Boolean, { nullable: true }) inheritPolicies?: boolean | null;
  @Field(() => Boolean, { nullable: true }) inheritTags?: boolean | null;
}

@InputType('CreateTypeRestrictionPolicyInput')
export class CreateTypeRestrictionPolicyInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true, description: 'when given, only these types (and subtypes with includeSubTypes)' }) allowedTypeNames?: string[] | null;
  @Field(() => [String], { nullable: true }) deniedTypeNames?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: 'default: true' }) includeSubTypes?: boolean | null;
}

@InputType('CreateContentTypeInput')
export class CreateContentTypeInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) parentTypeName?: string | null;
}
