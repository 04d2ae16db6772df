import { getFolder } from '../../src/modules/entries/index.js';
import { CreateFolderDocument, FolderChildrenDocument, HomeDocument } from '../operations/documents.generated.js';
import { fieldsOf } from '../inputs.js';
import { searchPageParameters, withChildren } from '../params.js';
import { contentDomain, operationRoute, route, type RestRoute } from '../route.js';
import { entriesResponseSchema, folderSchema } from '../shapes/schemas.js';
import { byId, createdEntryReply, entryReply, pageReply, readById } from './results.js';

/** Folders and the root of the content domain `access.svc.content.<repository_name>/v1`. */
export const folderRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/home`,
    summary: 'The root-level entries, folders first',
    request: (inputs) => ({ query: searchPageParameters(inputs), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: HomeDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/folder`,
    summary: 'Create a folder',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('CreateFolderInput') } as const }),
    responses: { 201: folderSchema },
    document: CreateFolderDocument,
    variables: ({ params, body }) => ({ repository: params.repository!, input: body }),
    reply: createdEntryReply,
  }),
  // a hot read: the read verb called directly (docs/api.md, "Hot reads")
  operationRoute({
    method: 'GET',
    path: `${contentDomain}/folder/:id`,
    summary: 'A folder',
    responses: { 200: folderSchema },
    operation: readById(getFolder),
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id/children`,
    summary: "A folder's entries, folders first",
    request: (inputs) => ({ query: searchPageParameters(inputs), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: FolderChildrenDocument,
    variables: (request, { options }) => ({ ...byId(request), options: fieldsOf(request.query, options), withChildren: withChildren(request.query) }),
    reply: pageReply,
  }),
];
