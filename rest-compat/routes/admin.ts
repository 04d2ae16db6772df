import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import {
  AddGroupMemberDocument,
  CreateGroupDocument,
  CreateRepositoryDocument,
  CreateUserDocument,
  DeleteGroupDocument,
  DeleteRepositoryDocument,
  DeleteUserDocument,
  GroupsDocument,
  RemoveGroupMemberDocument,
  RepositoriesDocument,
  RepositoryByNameDocument,
  UpdateRepositoryLimitsDocument,
  UsersDocument,
} from '../operations/documents.generated.js';
import { nonEmptyText, parse } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

const byRepositoryId = z.object({ repositoryId: nonEmptyText });
const byUserName = z.object({ userName: nonEmptyText });
const newUser = z.object({ userName: z.string(), password: z.string(), roles: z.array(z.string()).optional() });
const byGroupName = z.object({ name: nonEmptyText });
const newGroup = z.object({ name: z.string() });
const membership = z.object({ name: nonEmptyText, userName: nonEmptyText });

/** Repositories, users and groups of the administration domain (DESIGN §4, §10). */
export const adminRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/repository`,
    document: CreateRepositoryDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromJson('CreateRepositoryInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repositories`,
    document: RepositoriesDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/by-name`,
    document: RepositoryByNameDocument,
    input: (ctx) => ({ name: parse(z.object({ repositoryName: nonEmptyText }), ctx.query).repositoryName }),
    variables: (input) => input,
    reply: recordReply,
  }),
  route({
    method: 'PATCH',
    path: `${adminDomain}/repository/limits`,
    document: UpdateRepositoryLimitsDocument,
    input: async (ctx, _params, { inputs }) => ({
      ...parse(byRepositoryId, ctx.query),
      input: inputs.fromJson('UpdateRepositoryLimitsInput', await readJsonObject(ctx)),
    }),
    variables: (input) => input,
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/repository`,
    document: DeleteRepositoryDocument,
    input: (ctx) => parse(byRepositoryId, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/user`,
    document: CreateUserDocument,
    input: async (ctx) => parse(newUser, await readJsonObject(ctx), 'body'),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/users`,
    document: UsersDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/user`,
    document: DeleteUserDocument,
    input: (ctx) => parse(byUserName, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/group`,
    document: CreateGroupDocument,
    input: async (ctx) => parse(newGroup, await readJsonObject(ctx), 'body'),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/groups`,
    document: GroupsDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/group`,
    document: DeleteGroupDocument,
    input: (ctx) => parse(byGroupName, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/group/members`,
    document: AddGroupMemberDocument,
    input: (ctx) => parse(membership, ctx.query),
    variables: (input) => input,
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/group/members`,
    document: RemoveGroupMemberDocument,
    input: (ctx) => parse(membership, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
];
