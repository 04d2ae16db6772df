import { Arg, Authorized, Ctx, Directive, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { ConversionLimit, ConversionStrategy, CreateRepositoryInput, UpdateRepositoryLimitsInput } from './inputs.js';
import type { RepositoryLimits } from './repository.entity.js';
import { createRepository, deleteRepository, listRepositories, updateRepositoryLimits } from './operations.js';

@ObjectType('RepositoryLimits')
export class RepositoryLimitsNode {
  @Field(() => Int, { nullable: true }) maxNumberOfInputFiles?: number;
  @Field(() => Number, { nullable: true }) maxInputFileSize?: number;
  @Field(() => Number, { nullable: true }) maxTotalInputFileSize?: number;
  @Field(() => ConversionLimit, { nullable: true }) conversionLimit?: ConversionLimit;
  @Field(() => ConversionStrategy, { nullable: true }) conversionStrategy?: ConversionStrategy;
}

@Directive('@key(fields: "id")')
@ObjectType('Repository')
export class RepositoryNode {
  @Field(() => ID, { description: 'svc.repository.<name>' }) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) technicalName!: string;
  @Field(() => String) type!: string;
  @Field(() => Boolean) fullTextEnabled!: boolean;
  @Field(() => RepositoryLimitsNode, { description: 'unset limits: the conversion limits apply' }) limits!: RepositoryLimits;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String) createdBy!: string;
  @Field(() => Date) modifiedAt!: Date;
  @Field(() => String) modifiedBy!: string;
}

@Authorized('ADMIN')
@Resolver()
export class RepositoriesResolver {
  @Query(() => [RepositoryNode])
  async repositories(@Ctx() context: RequestContext) {
    return listRepositories(context.em);
  }

  @Query(() => RepositoryNode)
  async repository(@Arg('name', () => String) name: string, @Ctx() context: RequestContext) {
    return context.services.repositories.find(context.em, name);
  }

  @Mutation(() => RepositoryNode)
  async createRepository(@Arg('input', () => CreateRepositoryInput) input: CreateRepositoryInput, @Ctx() context: RequestContext) {
    return createRepository(context.em, context.services.config, await context.principal(), input);
  }

  @Mutation(() => RepositoryNode)
  async updateRepositoryLimits(
    @Arg('repositoryId', () => ID) repositoryId: string,
    @Arg('input', () => UpdateRepositoryLimitsInput) input: UpdateRepositoryLimitsInput,
    @Ctx() context: RequestContext,
  ) {
    return updateRepositoryLimits(context.services, context.em, await context.principal(), repositoryId, input);
  }

  @Mutation(() => Boolean, { description: 'a repository holding folders or contents is not deleted (409)' })
  async deleteRepository(@Arg('repositoryId', () => ID) repositoryId: string, @Ctx() context: RequestContext): Promise<boolean> {
    await deleteRepository(context.services, context.em, repositoryId);
    return true;
  }
}
