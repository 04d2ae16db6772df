import { Arg, Authorized, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { notAuthenticated } from '../../errors.js';
import { authenticate, createUser, deleteUser, listUsers, logout } from './operations.js';

@ObjectType('User')
export class UserNode {
  @Field(() => String) userName!: string;
  @Field(() => [String]) roles!: string[];
  @Field(() => Date) createdAt!: Date;
}

@ObjectType('Me')
class MeNode {
  @Field(() => String) userName!: string;
  @Field(() => [String]) roles!: string[];
}

@Resolver()
export class AuthResolver {
  @Mutation(() => String, { description: 'a session id for a user name and password (spec endpoint 14)' })
  async authenticate(
    @Arg('user', () => String) user: string,
    @Arg('password', () => String) password: string,
    @Ctx() context: RequestContext,
  ): Promise<string> {
    return authenticate(context.em, context.services, { user, password, address: context.address });
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'ends the calling session' })
  async logout(@Ctx() context: RequestContext): Promise<boolean> {
    if (!context.sessionToken) throw notAuthenticated();
    await logout(context.em, context.services, context.sessionToken);
    return true;
  }

  @Authorized()
  @Query(() => MeNode, { description: 'the calling user' })
  async me(@Ctx() context: RequestContext) {
    return context.principal();
  }
}

@Authorized('ADMIN')
@Resolver()
export class UsersResolver {
  @Query(() => [UserNode])
  async users(@Ctx() context: RequestContext) {
    return listUsers(context.em);
  }

  @Mutation(() => UserNode)
  async createUser(
    @Arg('userName', () => String) userName: string,
    @Arg('password', () => String) password: string,
    @Arg('roles', () => [String], { nullable: true }) roles: string[] | undefined,
    @Ctx() context: RequestContext,
  ) {
    return createUser(context.em, context.services, { userName, password, roles: roles ?? [] });
  }

  @Mutation(() => Boolean)
  async deleteUser(@Arg('userName', () => String) userName: string, @Ctx() context: RequestContext): Promise<boolean> {
    await deleteUser(context.em, context.services, await context.principal(), userName);
    return true;
  }
}
