import { performance } from 'node:perf_hooks';
import { Arg, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import { JSONObject } from '../../graphql/scalars.js';
import { CreateContentTypeInput, CreateDefaultTypePolicyInput, CreateInheritancePolicyInput, CreateTypeRestrictionPolicyInput } from './inputs.js';
import {
  assignPolicy,
  createContentType,
  createDefaultTypePolicy,
  createInheritancePolicy,
  createTypeRestrictionPolicy,
  deletePolicies,
  listContentTypes,
  listPolicies,
} from './operations.js';

@ObjectType('Policy')
export class PolicyNode {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: 'unique; names the policy for deletion' }) technicalName!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'DEFAULT_TYPE, INHERITANCE or TYPE_RESTRICTION' }) kind!: string;
  @Field(() => JSONObject, { description: "the kind's creation fields" }) fields!: Record<string, unknown>;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String) createdBy!: string;
}

@ObjectType('PolicyDeletion', { description: 'the spec answers a policy deletion with a job response quoting its duration' })
export class PolicyDeletionNode {
  @Field(() => Int) deleted!: number;
  @Field(() => Int, { description: 'ms' }) duration!: number;
}

@ObjectType('ContentType')
export class ContentTypeNode {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) parentTypeName!: string | null;
}

@Authorized('ADMIN')
@Resolver()
export class PoliciesResolver {
  @Query(() => [PolicyNode])
  async policies(@Ctx() context: RequestContext) {
    return listPolicies(context.em);
  }

  @Mutation(() => PolicyNode)
  async createDefaultTypePolicy(@Arg('input', () => CreateDefaultTypePolicyInput) input: CreateDefaultTypePolicyInput, @Ctx() context: RequestContext) {
    return createDefaultTypePolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyNode)
  async createInheritancePolicy(@Arg('input', () => CreateInheritancePolicyInput) input: CreateInheritancePolicyInput, @Ctx() context: RequestContext) {
    return createInheritancePolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyNode)
  async createTypeRestrictionPolicy(
    @Arg('input', () => CreateTypeRestrictionPolicyInput) input: CreateTypeRestrictionPolicyInput,
    @Ctx() context: RequestContext,
  ) {
    return createTypeRestrictionPolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyDeletionNode, { description: 'by ids, or by technical names (an empty list: every custom policy); one unknown is a 404 and nothing is deleted' })
  async deletePolicies(
    @Arg('ids', () => [ID], { nullable: true }) ids: string[] | undefined,
    @Arg('technicalNames', () => [String], { nullable: true }) technicalNames: string[] | undefined,
    @Ctx() context: RequestContext,
  ) {
    const started = performance.now();
    const given = (list: string[] | null | undefined): list is string[] => list !== undefined && list !== null;
    // both would be a guess at which one was meant (an unknown id was ignored, the named policies deleted)
    if (given(ids) && given(technicalNames)) throw illegalArguments('deletePolicies: give ids or technicalNames, not both');
    const deleted = await deletePolicies(context.em, given(technicalNames) ? { technicalNames } : { ids: ids ?? [] });
    return { deleted, duration: Math.round(performance.now() - started) };
  }

  @Mutation(() => Boolean)
  async assignPolicy(
    @Arg('policyId', () => ID) policyId: string,
    @Arg('repositoryId', () => ID) repositoryId: string,
    @Arg('folderId', () => ID) folderId: string,
    @Ctx() context: RequestContext,
  ) {
    await assignPolicy(context.em, { policyId, repositoryId, folderId }, true);
    return true;
  }

  @Mutation(() => Boolean)
  async unassignPolicy(
    @Arg('policyId', () => ID) policyId: string,
    @Arg('repositoryId', () => ID) repositoryId: string,
    @Arg('folderId', () => ID) folderId: string,
    @Ctx() context: RequestContext,
  ) {
    await assignPolicy(context.em, { policyId, repositoryId, folderId }, false);
    return true;
  }

  @Query(() => [ContentTypeNode])
  async contentTypes(@Ctx() context: RequestContext) {
    return listContentTypes(context.em);
  }

  @Mutation(() => ContentTypeNode)
  async createContentType(@Arg('input', () => CreateContentTypeInput) input: CreateContentTypeInput, @Ctx() context: RequestContext) {
    return createContentType(context.em, input);
  }
}
