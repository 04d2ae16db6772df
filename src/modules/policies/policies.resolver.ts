import { performance } from 'node:perf_hooks';
import { Arg, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import { JSONObject } from '../../graphql/scalars.js';
import { CreateContentTypeInputNode, CreateDefaultTypePolicyInputNode, CreateInheritancePolicyInputNode, CreateTypeRestrictionPolicyInputNode } from './inputs.js';
import {
  assignPolicy,
  createContentType,
  createDefaultTypePolicy,
  createInheritancePolicy,
  createTypeRestrictionPolicy,
  deletePolicies,
  listContentTypes,
  listPolicies,
  listPolicyAssignments,
} from './operations.js';

@ObjectType('Policy', { description: 'a policy: a rule for the folders it is assigned to (docs/administration.md)' })
export class PolicyNode {
  @Field(() => ID, { description: "the policy's id" }) id!: string;
  @Field(() => String, { description: 'unique; names the policy for deletion' }) technicalName!: string;
  @Field(() => String, { description: '1 to 255 characters' }) name!: string;
  @Field(() => String, { description: 'DEFAULT_TYPE, INHERITANCE or TYPE_RESTRICTION' }) kind!: string;
  @Field(() => JSONObject, { description: "the kind's creation fields" }) fields!: Record<string, unknown>;
  @Field(() => Date, { description: 'when the policy was created' }) createdAt!: Date;
  @Field(() => String, { description: 'the administrator who created it' }) createdBy!: string;
}

@ObjectType('PolicyAssignment', { description: 'a policy in effect in a folder (assignPolicy)' })
export class PolicyAssignmentNode {
  @Field(() => ID, { description: "the policy's id" }) policyId!: string;
  @Field(() => ID, { description: 'svc.repository.<name>' }) repositoryId!: string;
  @Field(() => ID, { description: "the folder's id" }) folderId!: string;
  @Field(() => String, { description: "the folder's name" }) folderName!: string;
}

@ObjectType('PolicyDeletion', { description: 'the spec answers a policy deletion with a job response quoting its duration' })
export class PolicyDeletionNode {
  @Field(() => Int, { description: 'how many policies were deleted' }) deleted!: number;
  @Field(() => Int, { description: 'ms' }) duration!: number;
}

@ObjectType('ContentType', { description: 'a type of the registry, which policies name' })
export class ContentTypeNode {
  @Field(() => String, { description: "the type's name" }) name!: string;
  @Field(() => String, { nullable: true, description: 'its parent type; null for a type without one' }) parentTypeName!: string | null;
}

@Authorized('ADMIN')
@Resolver()
export class PoliciesResolver {
  @Query(() => [PolicyNode], { description: 'every policy, by technical name' })
  async policies(@Ctx() context: RequestContext) {
    return listPolicies(context.em);
  }

  @Query(() => [PolicyAssignmentNode], { description: 'the folders policies are assigned to, by folder name' })
  async policyAssignments(@Arg('repositoryId', () => ID, { nullable: true, description: 'svc.repository.<name>; absent: every repository' }) repositoryId: string | undefined, @Ctx() context: RequestContext) {
    return listPolicyAssignments(context.em, repositoryId);
  }

  @Mutation(() => PolicyNode, { description: 'creates a default type policy (spec endpoint 6)' })
  async createDefaultTypePolicy(@Arg('input', () => CreateDefaultTypePolicyInputNode, { description: 'the policy' }) input: CreateDefaultTypePolicyInputNode, @Ctx() context: RequestContext) {
    return createDefaultTypePolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyNode, { description: 'creates an inheritance policy (spec endpoint 7)' })
  async createInheritancePolicy(@Arg('input', () => CreateInheritancePolicyInputNode, { description: 'the policy' }) input: CreateInheritancePolicyInputNode, @Ctx() context: RequestContext) {
    return createInheritancePolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyNode, { description: 'creates a type restriction policy (spec endpoint 8)' })
  async createTypeRestrictionPolicy(
    @Arg('input', () => CreateTypeRestrictionPolicyInputNode, { description: 'the policy' }) input: CreateTypeRestrictionPolicyInputNode,
    @Ctx() context: RequestContext,
  ) {
    return createTypeRestrictionPolicy(context.em, await context.principal(), input);
  }

  @Mutation(() => PolicyDeletionNode, { description: 'by ids, or by technical names (an empty list: every custom policy); one unknown is a 404 and nothing is deleted' })
  async deletePolicies(
    @Arg('ids', () => [ID], { nullable: true, description: "the policies' ids, at least one" }) ids: string[] | undefined,
    @Arg('technicalNames', () => [String], { nullable: true, description: "the policies' technical names; [] = every custom policy" }) technicalNames: string[] | undefined,
    @Ctx() context: RequestContext,
  ) {
    const started = performance.now();
    const given = (list: string[] | null | undefined): list is string[] => list !== undefined && list !== null;
    // both would be a guess at which one was meant (an unknown id was ignored, the named policies deleted)
    if (given(ids) && given(technicalNames)) throw illegalArguments('deletePolicies: give ids or technicalNames, not both');
    const deleted = await deletePolicies(context.em, await context.principal(), given(technicalNames) ? { technicalNames } : { ids: ids ?? [] });
    return { deleted, duration: Math.round(performance.now() - started) };
  }

  @Mutation(() => Boolean, { description: 'puts a policy in effect in a folder (and below it, as inheritance allows); one default type and one inheritance policy per folder' })
  async assignPolicy(
    @Arg('policyId', () => ID, { description: "the policy's id" }) policyId: string,
    @Arg('repositoryId', () => ID, { description: 'svc.repository.<name>' }) repositoryId: string,
    @Arg('folderId', () => ID, { description: "the folder's id" }) folderId: string,
    @Ctx() context: RequestContext,
  ) {
    await assignPolicy(context.em, await context.principal(), { policyId, repositoryId, folderId }, true);
    return true;
  }

  @Mutation(() => Boolean, { description: 'takes a policy off a folder (404 when it is not assigned there)' })
  async unassignPolicy(
    @Arg('policyId', () => ID, { description: "the policy's id" }) policyId: string,
    @Arg('repositoryId', () => ID, { description: 'svc.repository.<name>' }) repositoryId: string,
    @Arg('folderId', () => ID, { description: "the folder's id" }) folderId: string,
    @Ctx() context: RequestContext,
  ) {
    await assignPolicy(context.em, await context.principal(), { policyId, repositoryId, folderId }, false);
    return true;
  }

  @Query(() => [ContentTypeNode], { description: 'the type registry, by name' })
  async contentTypes(@Ctx() context: RequestContext) {
    return listContentTypes(context.em);
  }

  @Mutation(() => ContentTypeNode, { description: 'registers a content type' })
  async createContentType(@Arg('input', () => CreateContentTypeInputNode, { description: 'the type' }) input: CreateContentTypeInputNode, @Ctx() context: RequestContext) {
    return createContentType(context.em, input);
  }
}
