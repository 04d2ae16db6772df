import { Arg, Authorized, Ctx, Directive, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { Repository } from './repository.entity.js';
import { createRepository, findRepositoryByName } from './operations.js';

@Directive('@key(fields: "id")')
@ObjectType('Repository')
export class RepositoryNode {
  @Field(() => ID, { description: 'svc.repository.<name>' }) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) technicalName!: string;
  @Field(() => String) type!: string;
  @Field(() => Boolean) fullTextEnabled!: boolean;
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
    return context.em.find(Repository, {}, { orderBy: { name: 'asc' } });
  }

  @Query(() => RepositoryNode)
  async repository(@Arg('name', () => String) name: string, @Ctx() context: RequestContext) {
    return findRepositoryByName(context.em, name);
  }

  @Mutation(() => RepositoryNode)
  async createRepository(
    @Arg('name', () => String) name: string,
    @Arg('technicalName', () => String, { nullable: true }) technicalName: string | undefined,
    @Arg('fullTextEnabled', () => Boolean, { nullable: true }) fullTextEnabled: boolean | undefined,
    @Ctx() context: RequestContext,
  ) {
    return createRepository(context.em, await context.principal(), { name, technicalName, fullTextEnabled });
  }
}
