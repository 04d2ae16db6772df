import { createContent, entryScope, entryView, getContent, type NewContentInput } from '../../src/modules/entries/index.js';
import { contentDomain, operationRoute, type RestRoute } from '../route.js';
import { contentSchema } from '../shapes/schemas.js';
import { createdEntryReply, entryReply, readById } from './results.js';

/** Contents of the content domain (DESIGN §4). */
export const contentRoutes: RestRoute[] = [
  // the create verb called with the bytes this request received: no pending upload to stage and
  // claim (docs/api.md, "Uploads: the create verb called directly")
  operationRoute({
    method: 'POST',
    path: `${contentDomain}/content`,
    summary: 'Create a content: version 1.0, CURRENT',
    description: 'multipart/form-data: the part `file` (its bytes), and the fields of the new content; `properties` is one JSON object text field, `tags` a repeated field.',
    // the file part is the upload: an `uploadId` field (GraphQL's way) has no place beside it
    request: (inputs) => ({ body: { kind: 'upload', schema: inputs.text('CreateContentInput').omit({ uploadId: true }), file: 'required', held: true } as const }),
    responses: { 201: contentSchema },
    operation: async (context, { params, body }) => {
      // cast: a text field's ID is a string (the generated type allows GraphQL's numbers too)
      const input = { ...body.fields, received: body.upload.received! } as NewContentInput;
      const content = await createContent(await entryScope(context, params.repository!), input);
      return { result: entryView(content, context.services.config.BASE_PATH) };
    },
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
