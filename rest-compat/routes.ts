import { z } from 'zod';
import { readJsonObject } from '../src/http/body.js';
import { bool, list, nonEmptyText, parse, projection, searchOptions, searchParameters, text, versionStatus } from './params.js';
import { contentDomain, route, type GraphqlRoute } from './route.js';
import { entriesResponse, entryShape } from './shapes/entries.js';

const searchQuery = z.object(searchParameters);

/** Spec endpoint 1: the property filters. */
const propertySearchQuery = searchQuery.extend({
  chronicalId: text.optional(),
  createdBy: text.optional(),
  isLocked: bool.optional(),
  lastModifiedBy: text.optional(),
  lockedBy: text.optional(),
  mimeType: text.optional(),
  name: text.optional(),
  owner: text.optional(),
  parentId: text.optional(),
  tags: list.optional(),
  version: text.optional(),
  versionStatus: versionStatus.optional(),
});

const folderBody = z.object({ name: z.string({ message: 'must be a string' }), parentId: z.string().nullish() }).strict();

const page = (result: unknown) => result as { count: number; duration: number; entries: Record<string, unknown>[] };
const node = (result: unknown) => result as Record<string, unknown>;

/** Session calls: spec endpoint 14 and logout (DESIGN §4). */
export const sessionRoutes: GraphqlRoute[] = [
  route({
    method: 'POST',
    path: '/authenticate',
    operation: 'authenticate',
    input: (ctx) => parse(z.object({ user: nonEmptyText, password: nonEmptyText }), ctx.query),
    variables: (input) => input,
    // the answer is the session id as a JSON string
    reply: (result) => ({ body: JSON.stringify(result) }),
  }),
  route({
    method: 'POST',
    path: '/logout',
    operation: 'logout',
    input: () => ({}),
    variables: () => ({}),
    reply: () => ({ status: 204 }),
  }),
];

/** The content domain `access.svc.content.<repository_name>/v1`. */
export const contentRoutes: GraphqlRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/home`,
    operation: 'home',
    input: (ctx, params) => ({ repository: params.repository!, query: parse(searchQuery, ctx.query) }),
    variables: ({ repository, query }) => ({ repository, options: searchOptions(query) }),
    reply: (result, { query }) => ({ body: entriesResponse(page(result), projection(query)) }),
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/folder`,
    operation: 'create-folder',
    input: async (ctx, params) => ({ repository: params.repository!, body: parse(folderBody, await readJsonObject(ctx), 'body') }),
    variables: ({ repository, body }) => ({ repository, input: { name: body.name, parentId: body.parentId ?? null } }),
    reply: (result) => ({ status: 201, body: entryShape(node(result)) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id`,
    operation: 'get-folder',
    input: (_ctx, params) => ({ repository: params.repository!, id: params.id! }),
    variables: (input) => input,
    reply: (result) => ({ body: entryShape(node(result)) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id/children`,
    operation: 'folder-children',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, query: parse(searchQuery, ctx.query) }),
    variables: ({ repository, id, query }) => ({ repository, id, options: searchOptions(query) }),
    reply: (result, { query }) => ({ body: entriesResponse(page(result), projection(query)) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search`,
    operation: 'search-by-properties',
    input: (ctx, params) => ({ repository: params.repository!, query: parse(propertySearchQuery, ctx.query) }),
    variables: ({ repository, query }) => {
      const { chronicalId, createdBy, isLocked, lastModifiedBy, lockedBy, mimeType, name, owner, parentId, tags, version, versionStatus } = query;
      return {
        repository,
        filter: { chronicalId, createdBy, isLocked, lastModifiedBy, lockedBy, mimeType, name, owner, parentId, tags, version, versionStatus },
        options: searchOptions(query),
      };
    },
    reply: (result, { query }) => ({ body: entriesResponse(page(result), projection(query)) }),
  }),
];

export const graphqlRoutes: GraphqlRoute[] = [...sessionRoutes, ...contentRoutes];
