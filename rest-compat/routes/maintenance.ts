import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { bool, list, parse } from '../params.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { createdEntryReply, entryReply } from './results.js';

const string = (what = 'must be a string') => z.string({ message: what });
/** null (or '') moves to the root; absent leaves the folder as it is */
const parentId = z.string({ message: 'must be a string or null' }).nullable().optional();

const folderPatch = z.object({ name: string().optional(), parentId }).strict();
const contentPatch = z
  .object({
    name: string().optional(),
    parentId,
    typeName: string('must be a string or null').nullable().optional(),
    properties: z.record(z.string(), z.unknown(), { message: 'must be a JSON object or null' }).nullable().optional(),
  })
  .strict();
const copyBody = z.object({ parentId, name: string().optional() }).strict();
const recursiveQuery = z.object({ recursive: bool.optional() });
const permanentQuery = z.object({ permanent: bool.optional() });
const tagsQuery = z.object({ tags: list });

/** Only the fields the client sent: an absent field is "leave it", a null one is "clear it". */
const sent = <T extends Record<string, unknown>>(body: T) => Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));

/** Maintenance of folders and contents (DESIGN §4): update, move, delete, restore, copy, tags. */
export const maintenanceRoutes: GraphqlRoute[] = [
  route({
    method: 'PATCH',
    path: `${contentDomain}/folder/:id`,
    operation: 'update-folder',
    input: async (ctx, params) => ({ repository: params.repository!, id: params.id!, input: sent(parse(folderPatch, await readJsonObject(ctx), 'body')) }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/folder/:id`,
    operation: 'delete-folder',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, recursive: parse(recursiveQuery, ctx.query).recursive ?? false }),
    variables: (input) => input,
    reply: () => ({ status: 204 }),
  }),
  route({
    method: 'PATCH',
    path: `${contentDomain}/content/:id`,
    operation: 'update-content',
    input: async (ctx, params) => ({ repository: params.repository!, id: params.id!, input: sent(parse(contentPatch, await readJsonObject(ctx), 'body')) }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id`,
    operation: 'delete-content',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, permanent: parse(permanentQuery, ctx.query).permanent ?? false }),
    variables: (input) => input,
    reply: () => ({ status: 204 }),
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/restore`,
    operation: 'restore-content',
    input: (_ctx, params) => ({ repository: params.repository!, id: params.id! }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/copy`,
    operation: 'copy-content',
    input: async (ctx, params) => ({ repository: params.repository!, id: params.id!, input: sent(parse(copyBody, await readJsonObject(ctx), 'body')) }),
    variables: (input) => input,
    reply: createdEntryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/tags`,
    operation: 'add-tags',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, tags: parse(tagsQuery, ctx.query).tags }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/tags`,
    operation: 'remove-tags',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, tags: parse(tagsQuery, ctx.query).tags }),
    variables: (input) => input,
    reply: entryReply,
  }),
];
