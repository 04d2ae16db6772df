import type { Context } from 'koa';
import type { Services } from '../../src/context.js';
import { illegalArguments } from '../../src/errors.js';
import { parseJson } from '../../src/http/body.js';
import { singleField } from '../../src/http/multipart.js';
import { receiveMultipartUpload, scopeOfHttpRequest } from '../../src/modules/entries/transfer.js';
import { discardUpload } from '../../src/modules/entries/uploads.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { createdEntryReply, entryReply } from './results.js';

/** `properties` is sent as one JSON object text field. */
export function propertiesField(fields: Record<string, string[]>): Record<string, unknown> | undefined {
  const text = singleField(fields, 'properties');
  if (text === undefined || text === '') return undefined;
  const value = parseJson(text, 'properties (it must be a JSON object)');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw illegalArguments('properties must be a JSON object');
  return value as Record<string, unknown>;
}

/** Streams the `file` part into a pending upload and reads the text fields around it. */
export async function multipartUpload(ctx: Context, services: Services, repository: string, requireFile: boolean) {
  const scope = await scopeOfHttpRequest(ctx, services, repository);
  return receiveMultipartUpload(ctx, scope, requireFile);
}

export const dropUpload = async (input: { uploadId?: string }, services: Services) => {
  if (input.uploadId) await discardUpload(services.orm.em.fork(), services, input.uploadId);
};

/** Contents of the content domain (DESIGN §4). */
export const contentRoutes: GraphqlRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content`,
    operation: 'create-content',
    input: async (ctx, params, services) => {
      const { fields, upload } = await multipartUpload(ctx, services, params.repository!, true);
      try {
        return {
          repository: params.repository!,
          uploadId: upload!.id,
          input: {
            uploadId: upload!.id,
            name: singleField(fields, 'name') ?? null,
            parentId: singleField(fields, 'parentId') || null,
            mimeType: singleField(fields, 'mimeType') || null,
            typeName: singleField(fields, 'typeName') || null,
            tags: fields.tags ?? [],
            properties: propertiesField(fields) ?? null,
          },
        };
      } catch (error) {
        // a bad field (malformed properties, a field given twice): the staged bytes go too
        await dropUpload({ uploadId: upload!.id }, services);
        throw error;
      }
    },
    variables: ({ repository, input }) => ({ repository, input }),
    reply: createdEntryReply,
    onFailure: dropUpload,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id`,
    operation: 'get-content',
    input: (_ctx, params) => ({ repository: params.repository!, id: params.id! }),
    variables: (input) => input,
    reply: entryReply,
  }),
];
