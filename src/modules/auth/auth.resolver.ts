import { Arg, Authorized, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { notAuthenticated } from '../../errors.js';
import { addMember, createGroup, deleteGroup, listGroups, removeMember } from './groups.js';
import { authenticate, createUser, deleteUser, listUsers, logout } from './operations.js';

@ObjectType('User', { description: 'a user of the service (never with its password or hash)' })
export class UserNode {
  @Field(() => String, { description: 'unique whatever its case; the spelling it was created with' }) userName!: string;
  @Field(() => [String], { description: 'ADMIN and/or USER' }) roles!: string[];
  @Field(() => Date, { description: 'when the user was created' }) createdAt!: Date;
}

@ObjectType('Me', { description: 'the user of the calling session' })
class MeNode {
  @Field(() => String, { description: "the user's name" }) userName!: string;
  @Field(() => [String], { description: 'ADMIN and/or USER' }) roles!: string[];
  @Field(() => [String], { description: 'the groups the user is a member of (the `group:<name>` principals of access control lists)' }) groups!: string[];
}

@ObjectType('Group', { description: 'a group of users: the principal `group:<name>` of access control lists' })
export class GroupNode {
  @Field(() => String, { description: 'unique whatever its case; the spelling it was created with' }) name!: string;
  @Field(() => [String], { description: 'the user names of its members, as the users were created' }) members!: string[];
  @Field(() => Date, { description: 'when the group was created' }) createdAt!: Date;
  @Field(() => String, { description: 'the administrator who created it' }) createdBy!: string;
}

@Resolver()
export class AuthResolver {
  @Mutation(() => String, { description: 'a session id for a user name and password (spec endpoint 14)' })
  async authenticate(
    @Arg('user', () => String, { description: 'the user name, in any case' }) user: string,
    @Arg('password', () => String, { description: "the user's password" }) password: string,
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
  @Query(() => [UserNode], { description: 'every user, by name' })
  async users(@Ctx() context: RequestContext) {
    return listUsers(context.em);
  }

  @Mutation(() => UserNode, { description: 'creates a user' })
  async createUser(
    @Arg('userName', () => String, { description: '1 to 64 ASCII letters, digits or . _ @ -; unique whatever its case' }) userName: string,
    @Arg('password', () => String, { description: '8 to 256 characters, not one character repeated, not the user name' }) password: string,
    @Arg('roles', () => [String], { nullable: true, description: 'ADMIN and/or USER; default: USER' }) roles: string[] | undefined,
    @Ctx() context: RequestContext,
  ) {
    return createUser(context.em, context.services, await context.principal(), { userName, password, roles: roles ?? [] });
  }

  @Mutation(() => Boolean, {
    description: "deletes a user, ends the user's sessions and cancels the user's pending and running jobs; never one's own user nor the last administrator (409)",
  })
  async deleteUser(
    @Arg('userName', () => String, { description: 'the user name, in any case' }) userName: string,
    @Ctx() context: RequestContext,
  ): Promise<boolean> {
    await deleteUser(context.em, context.services, await context.principal(), userName);
    return true;
  }
}

const groupNameDescription = 'the group name, in any case';
const memberDescription = 'the user name, in any case';

@Authorized('ADMIN')
@Resolver()
export class GroupsResolver {
  @Query(() => [GroupNode], { description: 'every group with its members, by name' })
  async groups(@Ctx() context: RequestContext) {
    return listGroups(context.em);
  }

  @Mutation(() => GroupNode, { description: 'creates a group without members; a name taken in any case is a 409' })
  async createGroup(
    @Arg('name', () => String, { description: "1 to 64 ASCII letters, digits or . _ @ -, not 'EVERYONE'; unique whatever its case" }) name: string,
    @Ctx() context: RequestContext,
  ) {
    return createGroup(context.em, await context.principal(), { name });
  }

  @Mutation(() => Boolean, { description: "deletes a group and its memberships; its members' sessions lose it at once" })
  async deleteGroup(@Arg('name', () => String, { description: groupNameDescription }) name: string, @Ctx() context: RequestContext): Promise<boolean> {
    await deleteGroup(context.em, context.services, await context.principal(), { name });
    return true;
  }

  @Mutation(() => GroupNode, { description: 'adds a user to a group (409 when a member already); answers the group' })
  async addGroupMember(
    @Arg('name', () => String, { description: groupNameDescription }) name: string,
    @Arg('userName', () => String, { description: memberDescription }) userName: string,
    @Ctx() context: RequestContext,
  ) {
    return addMember(context.em, context.services, await context.principal(), { name, userName });
  }

  @Mutation(() => GroupNode, { description: 'removes a user from a group (404 when not a member); answers the group' })
  async removeGroupMember(
    @Arg('name', () => String, { description: groupNameDescription }) name: string,
    @Arg('userName', () => String, { description: memberDescription }) userName: string,
    @Ctx() context: RequestContext,
  ) {
    return removeMember(context.em, context.services, await context.principal(), { name, userName });
  }
}
