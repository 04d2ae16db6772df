import type { Context } from 'koa';
import type { Services } from '../../src/context.js';
import { receiveMultipartUpload, scopeOfHttpRequest } from '../../src/http/transfer.js';
import { discardUpload } from '../../src/modules/entries/uploads.js';
import { CreateContentDocument, GetContentDocument } from '../operations/documents.generated.js';
import { byId } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { createdEntryReply, entryReply } from './results.js';

/** A multipart request's `file` part, staged as a pending upload of the caller, and its text fields. */
export interface ReceivedUpload {
  fields: Record<string, string[]>;
  uploadId?: string;
  /** drops the staged bytes (the operation failed, or a field was bad) */
  discard(): Promise<void>;
}

/** Streams the `file` part into a pending upload and reads the text fields around it. */
export async function multipartUpload(ctx: Context, services: Services, repository: string, requireFile: boolean): Promise<ReceivedUpload> {
  const scope = await scopeOfHttpRequest(ctx, services, repository);
  const { fields, upload } = await receiveMultipartUpload(ctx, scope, requireFile);
  return { fields, uploadId: upload?.id, discard: async () => (upload ? discardUpload(scope, upload.id) : undefined) };
}

/** Reads fields that came with an upload: a bad one drops the staged bytes too. */
export async function uploadFields<T>(upload: ReceivedUpload, read: () => T): Promise<T> {
  try {
    return read();
  } catch (error) {
    await upload.discard();
    throw error;
  }
}

export const dropUpload = (input: { upload: ReceivedUpload }) => input.upload.discard();

/** Contents of the content domain (DESIGN §4). */
export const contentRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content`,
    document: CreateContentDocument,
    input: async (ctx, params, { services, inputs }) => {
      const upload = await multipartUpload(ctx, services, params.repository!, true);
      // the form fields are CreateContentInput's; `properties` is one JSON object text field
      const input = await uploadFields(upload, () => {
        inputs.requireKnownFields('CreateContentInput', Object.keys(upload.fields));
        return inputs.fromText('CreateContentInput', { ...upload.fields, uploadId: upload.uploadId }, 'field');
      });
      return { repository: params.repository!, upload, input };
    },
    variables: ({ repository, input }) => ({ repository, input }),
    reply: createdEntryReply,
    onFailure: dropUpload,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id`,
    document: GetContentDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
];
