import { getContent } from '../../src/modules/entries/index.js';
import { CreateContentDocument } from '../operations/documents.generated.js';
import { contentDomain, operationRoute, route, type RestRoute } from '../route.js';
import { contentSchema } from '../shapes/schemas.js';
import { createdEntryReply, entryReply, readById } from './results.js';

/** Contents of the content domain (DESIGN §4). */
export const contentRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content`,
    summary: 'Create a content: version 1.0, CURRENT',
    description: 'multipart/form-data: the part `file` (its bytes), and the fields of the new content; `properties` is one JSON object text field, `tags` a repeated field.',
    // the file part is the upload: an `uploadId` field (GraphQL's way) has no place beside it
    request: (inputs) => ({ body: { kind: 'upload', schema: inputs.text('CreateContentInput').omit({ uploadId: true }), file: 'required' } as const }),
    responses: { 201: contentSchema },
    document: CreateContentDocument,
    variables: ({ params, body }) => ({ repository: params.repository!, input: { ...body.fields, uploadId: body.upload.uploadId! } }),
    reply: createdEntryReply,
  }),
  // a hot read: the read verb called directly (docs/api.md, "Hot reads")
  operationRoute({
    method: 'GET',
    path: `${contentDomain}/content/:id`,
    summary: 'A content (any version, by its id)',
    responses: { 200: contentSchema },
    operation: readById(getContent),
    reply: entryReply,
  }),
];
