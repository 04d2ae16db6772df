import type { Context } from 'koa';
import type { Services } from '../../src/context.js';
import { receiveMultipartUpload, scopeOfHttpRequest } from '../../src/http/transfer.js';
import { discardUpload } from '../../src/modules/entries/index.js';
import { CreateContentDocument, GetContentDocument } from '../operations/documents.generated.js';
import { byId } from '../params.js';
import type { InputTypes, RestInputs, TextSource } from '../inputs.js';
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

/**
 * The input `name` from the text fields that came with an upload (and from `around`, read first: a
 * field missing from the body may come as a query parameter); `uploadId` is the staged file's. A field
 * the input has no place for is a 400 (it would be lost without a word), and a bad field drops the
 * staged bytes too.
 */
export async function uploadInput<N extends keyof InputTypes>(upload: ReceivedUpload, inputs: RestInputs, name: N, around: TextSource = {}): Promise<InputTypes[N]> {
  try {
    // the file part is the upload: an `uploadId` field (GraphQL's way) has no place beside it
    inputs.requireKnownFields(name, Object.keys(upload.fields), 'field', ['uploadId']);
    return inputs.fromText(name, { ...around, ...upload.fields, uploadId: upload.uploadId }, 'field');
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
      const input = await uploadInput(upload, inputs, 'CreateContentInput');
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
