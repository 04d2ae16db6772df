import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { parse, searchOptions, searchParameters, withChildren } from '../params.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { createdEntryReply, entryReply, pageReply } from './results.js';

const searchQuery = z.object(searchParameters);
const folderBody = z.object({ name: z.string({ message: 'must be a string' }), parentId: z.string().nullish() }).strict();

/** Folders and the root of the content domain `access.svc.content.<repository_name>/v1`. */
export const folderRoutes: GraphqlRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/home`,
    operation: 'home',
    input: (ctx, params) => ({ repository: params.repository!, query: parse(searchQuery, ctx.query) }),
    variables: ({ repository, query }) => ({ repository, options: searchOptions(query), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/folder`,
    operation: 'create-folder',
    input: async (ctx, params) => ({ repository: params.repository!, body: parse(folderBody, await readJsonObject(ctx), 'body') }),
    variables: ({ repository, body }) => ({ repository, input: { name: body.name, parentId: body.parentId ?? null } }),
    reply: createdEntryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id`,
    operation: 'get-folder',
    input: (_ctx, params) => ({ repository: params.repository!, id: params.id! }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id/children`,
    operation: 'folder-children',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, query: parse(searchQuery, ctx.query) }),
    variables: ({ repository, id, query }) => ({ repository, id, options: searchOptions(query), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
];
