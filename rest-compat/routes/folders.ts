import { readJsonObject } from '../../src/http/body.js';
import { CreateFolderDocument, FolderChildrenDocument, GetFolderDocument, HomeDocument } from '../operations/documents.generated.js';
import { byId, searchPage, withChildren } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { createdEntryReply, entryReply, pageReply } from './results.js';

/** Folders and the root of the content domain `access.svc.content.<repository_name>/v1`. */
export const folderRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/home`,
    document: HomeDocument,
    input: (ctx, params, { inputs }) => ({ repository: params.repository!, ...searchPage(ctx, inputs) }),
    variables: ({ repository, options, projection }) => ({ repository, options, withChildren: withChildren(projection) }),
    reply: pageReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/folder`,
    document: CreateFolderDocument,
    input: async (ctx, params, { inputs }) => ({ repository: params.repository!, input: inputs.fromJson('CreateFolderInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: createdEntryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id`,
    document: GetFolderDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/folder/:id/children`,
    document: FolderChildrenDocument,
    input: (ctx, params, { inputs }) => ({ ...byId(ctx, params), ...searchPage(ctx, inputs) }),
    variables: ({ repository, id, options, projection }) => ({ repository, id, options, withChildren: withChildren(projection) }),
    reply: pageReply,
  }),
];
