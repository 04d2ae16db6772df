import { z } from 'zod';
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
import { bool, list } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { contentSchema, folderSchema } from '../shapes/schemas.js';
import { byId, createdEntryReply, entryReply, noContentReply } from './results.js';

const recursiveQuery = z.object({ recursive: bool.optional().meta({ description: 'true: delete a folder that is not empty, with everything in it' }) });
const permanentQuery = z.object({ permanent: bool.optional().meta({ description: 'true: purge every version and its bytes; else the content is deactivated' }) });
const tagsQuery = z.object({ tags: list.meta({ description: 'repeated: tags=a&tags=b', example: ['q3', 'finance'] }) });

/**
 * Maintenance of folders and contents (DESIGN §4): update, move, delete, restore, copy, tags. A JSON
 * body is the GraphQL input as is: an absent field is "leave it", a null one is "clear it".
 */
export const maintenanceRoutes: RestRoute[] = [
  route({
    method: 'PATCH',
    path: `${contentDomain}/folder/:id`,
    summary: 'Rename or move a folder, set its tags or properties',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('UpdateFolderInput') } as const }),
    responses: { 200: folderSchema },
    document: UpdateFolderDocument,
    variables: (request) => ({ ...byId(request), input: request.body }),
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/folder/:id`,
    summary: 'Delete a folder (409 when not empty, unless recursive=true)',
    request: () => ({ query: recursiveQuery }),
    responses: { 204: null },
    document: DeleteFolderDocument,
    variables: (request) => ({ ...byId(request), recursive: request.query.recursive ?? false }),
    reply: noContentReply,
  }),
  route({
    method: 'PATCH',
    path: `${contentDomain}/content/:id`,
    summary: 'Rename or move a content, set its type or properties (same version)',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('UpdateContentInput') } as const }),
    responses: { 200: contentSchema },
    document: UpdateContentDocument,
    variables: (request) => ({ ...byId(request), input: request.body }),
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id`,
    summary: 'Deactivate a content, or purge it (permanent=true)',
    request: () => ({ query: permanentQuery }),
    responses: { 204: null },
    document: DeleteContentDocument,
    variables: (request) => ({ ...byId(request), permanent: request.query.permanent ?? false }),
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/restore`,
    summary: 'Make a deactivated content active again',
    responses: { 200: contentSchema },
    document: RestoreContentDocument,
    variables: byId,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/copy`,
    summary: 'Copy a content: a new chronicle',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('CopyContentInput') } as const }),
    responses: { 201: contentSchema },
    document: CopyContentDocument,
    variables: (request) => ({ ...byId(request), input: request.body }),
    reply: createdEntryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/tags`,
    summary: 'Add tags to a content',
    request: () => ({ query: tagsQuery }),
    responses: { 200: contentSchema },
    document: AddTagsDocument,
    variables: (request) => ({ ...byId(request), tags: request.query.tags }),
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/tags`,
    summary: 'Remove tags from a content',
    request: () => ({ query: tagsQuery }),
    responses: { 200: contentSchema },
    document: RemoveTagsDocument,
    variables: (request) => ({ ...byId(request), tags: request.query.tags }),
    reply: entryReply,
  }),
];
