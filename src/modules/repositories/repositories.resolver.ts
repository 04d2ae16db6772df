import { Arg, Authorized, Ctx, Directive, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { ConversionLimit, ConversionStrategy, CreateRepositoryInputNode, UpdateRepositoryLimitsInputNode } from './inputs.js';
import type { RepositoryLimits } from './repository.entity.js';
import { createRepository, deleteRepository, listRepositories, updateRepositoryLimits } from './operations.js';

@ObjectType('RepositoryLimits', { description: "the limits of a repository's conversion jobs; null: not set" })
export class RepositoryLimitsNode {
  @Field(() => Int, { nullable: true, description: 'input files per job; null: CONV_MAX_NUMBER_OF_INPUT_FILES applies' }) maxNumberOfInputFiles?: number;
  @Field(() => Number, { nullable: true, description: 'bytes of one input file; null: CONV_MAX_INPUT_FILE_SIZE applies' }) maxInputFileSize?: number;
  @Field(() => Number, { nullable: true, description: 'bytes of all input files of a job; null: CONV_MAX_TOTAL_INPUT_FILE_SIZE applies' }) maxTotalInputFileSize?: number;
  @Field(() => ConversionLimit, { nullable: true, description: 'the share of the PDF object limits a job may use; null: UNLIMITED' }) conversionLimit?: ConversionLimit;
  @Field(() => ConversionStrategy, { nullable: true, description: 'what happens to a PDF over that share; null: ERROR' }) conversionStrategy?: ConversionStrategy;
}

@Directive('@key(fields: "id")')
@ObjectType('Repository', { description: 'a repository: a named store of folders and contents, with its content domain access.svc.content.<name>' })
export class RepositoryNode {
  @Field(() => ID, { description: 'svc.repository.<name>' }) id!: string;
  @Field(() => String, { description: '1 to 64 letters, digits, _ or -; unique whatever its case' }) name!: string;
  @Field(() => String, { description: 'unique whatever its case (default: the name); the checks can name the repository by it' }) technicalName!: string;
  @Field(() => String, { description: 'STANDARD' }) type!: string;
  @Field(() => Boolean, { description: 'whether texts are extracted and full-text search is allowed' }) fullTextEnabled!: boolean;
  @Field(() => RepositoryLimitsNode, { description: 'unset limits: the conversion limits apply' }) limits!: RepositoryLimits;
  @Field(() => Date, { description: 'when the repository was created' }) createdAt!: Date;
  @Field(() => String, { description: 'the administrator who created it' }) createdBy!: string;
  @Field(() => Date, { description: 'when its limits or full-text flag last changed (at first: its creation)' }) modifiedAt!: Date;
  @Field(() => String, { description: 'the administrator who last changed it' }) modifiedBy!: string;
}

@Authorized('ADMIN')
@Resolver()
export class RepositoriesResolver {
  @Query(() => [RepositoryNode], { description: 'every repository, by name' })
  async repositories(@Ctx() context: RequestContext) {
    return listRepositories(context.em);
  }

  @Query(() => RepositoryNode, { description: 'a repository by name' })
  async repository(@Arg('name', () => String, { description: "the repository's name" }) name: string, @Ctx() context: RequestContext) {
    return context.services.repositories.find(context, name);
  }

  @Mutation(() => RepositoryNode, { description: 'creates a repository' })
  async createRepository(
    @Arg('input', () => CreateRepositoryInputNode, { description: 'its name, technical name, full-text flag and limits' }) input: CreateRepositoryInputNode,
    @Ctx() context: RequestContext,
  ) {
    return createRepository(context.em, context.services.config, await context.principal(), input);
  }

  @Mutation(() => RepositoryNode, { description: "changes a repository's limits and full-text flag; every process sees the change at once" })
  async updateRepositoryLimits(
    @Arg('repositoryId', () => ID, { description: 'svc.repository.<name>' }) repositoryId: string,
    @Arg('input', () => UpdateRepositoryLimitsInputNode, { description: 'the changes' }) input: UpdateRepositoryLimitsInputNode,
    @Ctx() context: RequestContext,
  ) {
    return updateRepositoryLimits(context.services, context.em, await context.principal(), repositoryId, input);
  }

  @Mutation(() => Boolean, { description: 'a repository holding folders or contents is not deleted (409)' })
  async deleteRepository(
    @Arg('repositoryId', () => ID, { description: 'svc.repository.<name>' }) repositoryId: string,
    @Ctx() context: RequestContext,
  ): Promise<boolean> {
    await deleteRepository(context.services, context.em, await context.principal(), repositoryId);
    return true;
  }
}
