import { z } from 'zod';
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
import { nonEmptyText } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { groupSchema, repositorySchema, userSchema } from '../shapes/schemas.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

export const byRepositoryId = z.object({ repositoryId: nonEmptyText });
const byUserName = z.object({ userName: nonEmptyText });
const newUser = z.object({
  userName: z.string(),
  password: z.string(),
  roles: z.array(z.string()).optional().meta({ description: 'USER (default) and/or ADMIN' }),
});
const byGroupName = z.object({ name: nonEmptyText });
const newGroup = z.object({ name: z.string() });
const membership = z.object({ name: nonEmptyText, userName: nonEmptyText });

/** Repositories, users and groups of the administration domain (DESIGN §4, §10). */
export const adminRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/repository`,
    summary: 'Create a repository',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('CreateRepositoryInput') } as const }),
    responses: { 201: repositorySchema },
    document: CreateRepositoryDocument,
    variables: ({ body }) => ({ input: body }),
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repositories`,
    summary: 'The repositories',
    responses: { 200: z.array(repositorySchema) },
    document: RepositoriesDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/by-name`,
    summary: 'A repository by its name',
    request: () => ({ query: z.object({ repositoryName: nonEmptyText }) }),
    responses: { 200: repositorySchema },
    document: RepositoryByNameDocument,
    variables: ({ query }) => ({ name: query.repositoryName }),
    reply: recordReply,
  }),
  route({
    method: 'PATCH',
    path: `${adminDomain}/repository/limits`,
    summary: "Set a repository's conversion limits and full text",
    request: (inputs) => ({ query: byRepositoryId, body: { kind: 'json', schema: inputs.json('UpdateRepositoryLimitsInput') } as const }),
    responses: { 200: repositorySchema },
    document: UpdateRepositoryLimitsDocument,
    variables: ({ query, body }) => ({ ...query, input: body }),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/repository`,
    summary: 'Delete a repository with everything in it',
    request: () => ({ query: byRepositoryId }),
    responses: { 204: null },
    document: DeleteRepositoryDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/user`,
    summary: 'Create a user',
    request: () => ({ body: { kind: 'json', schema: newUser } as const }),
    responses: { 201: userSchema },
    document: CreateUserDocument,
    variables: ({ body }) => body,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/users`,
    summary: 'The users',
    responses: { 200: z.array(userSchema) },
    document: UsersDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/user`,
    summary: 'Delete a user (their sessions end)',
    request: () => ({ query: byUserName }),
    responses: { 204: null },
    document: DeleteUserDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/group`,
    summary: 'Create a group',
    request: () => ({ body: { kind: 'json', schema: newGroup } as const }),
    responses: { 201: groupSchema },
    document: CreateGroupDocument,
    variables: ({ body }) => body,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/groups`,
    summary: 'The groups',
    responses: { 200: z.array(groupSchema) },
    document: GroupsDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/group`,
    summary: 'Delete a group',
    request: () => ({ query: byGroupName }),
    responses: { 204: null },
    document: DeleteGroupDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/group/members`,
    summary: 'Add a user to a group',
    request: () => ({ query: membership }),
    responses: { 200: groupSchema },
    document: AddGroupMemberDocument,
    variables: ({ query }) => query,
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/group/members`,
    summary: 'Remove a user from a group',
    request: () => ({ query: membership }),
    responses: { 204: null },
    document: RemoveGroupMemberDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
];
