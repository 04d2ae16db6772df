import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import {
  AddTagsDocument,
  CopyContentDocument,
  DeleteContentDocument,
  DeleteFolderDocument,
  RemoveTagsDocument,
  RestoreContentDocument,
  UpdateContentDocument,
  UpdateFolderDocument,
} from '../operations/documents.generated.js';
import { bool, byId, list, parse } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { createdEntryReply, entryReply, noContentReply } from './results.js';

const recursiveQuery = z.object({ recursive: bool.optional() });
const permanentQuery = z.object({ permanent: bool.optional() });
const tagsQuery = z.object({ tags: list });

/**
 * Maintenance of folders and contents (DESIGN §4): update, move, delete, restore, copy, tags. A JSON
 * body is the GraphQL input as is: an absent field is "leave it", a null one is "clear it".
 */
export const maintenanceRoutes: RestRoute[] = [
  route({
    method: 'PATCH',
    path: `${contentDomain}/folder/:id`,
    document: UpdateFolderDocument,
    input: async (ctx, params, { inputs }) => ({ ...byId(ctx, params), input: inputs.fromJson('UpdateFolderInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/folder/:id`,
    document: DeleteFolderDocument,
    input: (ctx, params) => ({ ...byId(ctx, params), recursive: parse(recursiveQuery, ctx.query).recursive ?? false }),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'PATCH',
    path: `${contentDomain}/content/:id`,
    document: UpdateContentDocument,
    input: async (ctx, params, { inputs }) => ({ ...byId(ctx, params), input: inputs.fromJson('UpdateContentInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id`,
    document: DeleteContentDocument,
    input: (ctx, params) => ({ ...byId(ctx, params), permanent: parse(permanentQuery, ctx.query).permanent ?? false }),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/restore`,
    document: RestoreContentDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/copy`,
    document: CopyContentDocument,
    input: async (ctx, params, { inputs }) => ({ ...byId(ctx, params), input: inputs.fromJson('CopyContentInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: createdEntryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/tags`,
    document: AddTagsDocument,
    input: (ctx, params) => ({ ...byId(ctx, params), tags: parse(tagsQuery, ctx.query).tags }),
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/tags`,
    document: RemoveTagsDocument,
    input: (ctx, params) => ({ ...byId(ctx, params), tags: parse(tagsQuery, ctx.query).tags }),
    variables: (input) => input,
    reply: entryReply,
  }),
];
