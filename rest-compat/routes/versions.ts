import type { Context } from 'koa';
import type { Services } from '../../src/context.js';
import { ServiceError } from '../../src/errors.js';
import { readForm } from '../../src/http/body.js';
import {
  CancelCheckOutDocument,
  CheckInDocument,
  CheckOutDocument,
  LockDocument,
  ReplaceResourceDocument,
  UnlockDocument,
  VersionsDocument,
} from '../operations/documents.generated.js';
import { byId, searchPage } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { dropUpload, multipartUpload, uploadInput, type ReceivedUpload } from './contents.js';
import { entryReply, noContentReply, pageReply } from './results.js';

const hasBody = (ctx: Context) => ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length'] ?? 0) > 0;

const noUpload = (fields: Record<string, string[]>): ReceivedUpload => ({ fields, discard: async () => undefined });

/**
 * The body of a check-in: multipart/form-data with an optional part `file` (new bytes, staged as a
 * pending upload) and text fields; or no body at all; or, for clients without a file, the fields as a
 * form or JSON object. Anything else is a 415.
 */
async function checkInBody(ctx: Context, services: Services, repository: string): Promise<ReceivedUpload> {
  if (ctx.request.is('multipart/form-data')) return multipartUpload(ctx, services, repository, false);
  if (!hasBody(ctx)) return noUpload({});
  if (ctx.request.is('application/x-www-form-urlencoded', 'application/json')) {
    const form = await readForm(ctx);
    return noUpload(Object.fromEntries(Object.entries(form).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])));
  }
  throw new ServiceError(
    'unsupportedMediaType',
    `check-in takes multipart/form-data (optional part 'file', fields 'major' and 'comment') or no body, got '${ctx.request.type}'`,
  );
}

/** Versioning of the content domain (DESIGN §4, §5): every `{id}` may name any version of the content. */
export const versionRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-out`,
    document: CheckOutDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-in`,
    document: CheckInDocument,
    input: async (ctx, params, { services, inputs }) => {
      const upload = await checkInBody(ctx, services, params.repository!);
      // the spec sends parameters in the query unless marked form
      const input = await uploadInput(upload, inputs, 'CheckInInput', ctx.query);
      return { ...byId(ctx, params), upload, input };
    },
    variables: ({ repository, id, input }) => ({ repository, id, input }),
    reply: entryReply,
    onFailure: dropUpload,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/cancel-check-out`,
    document: CancelCheckOutDocument,
    input: byId,
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/lock`,
    document: LockDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/lock`,
    document: UnlockDocument,
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/versions`,
    document: VersionsDocument,
    input: (ctx, params, { inputs }) => ({ ...byId(ctx, params), ...searchPage(ctx, inputs) }),
    variables: ({ repository, id, options }) => ({ repository, id, options }),
    reply: pageReply,
  }),
  route({
    method: 'PUT',
    path: `${contentDomain}/content/:id/resource`,
    document: ReplaceResourceDocument,
    input: async (ctx, params, { services, inputs }) => {
      const upload = await multipartUpload(ctx, services, params.repository!, true);
      // the spec sends parameters in the query unless marked form
      const input = await uploadInput(upload, inputs, 'ReplaceResourceInput', ctx.query);
      return { ...byId(ctx, params), upload, input };
    },
    variables: ({ repository, id, input }) => ({ repository, id, input }),
    reply: entryReply,
    onFailure: dropUpload,
  }),
];
