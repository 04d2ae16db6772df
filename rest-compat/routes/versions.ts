import type { Context } from 'koa';
import { z } from 'zod';
import type { Services } from '../../src/context.js';
import { ServiceError } from '../../src/errors.js';
import { readForm } from '../../src/http/body.js';
import { singleField } from '../../src/http/multipart.js';
import { bool, parse, searchOptions, searchParameters, text } from '../params.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { dropUpload, multipartUpload } from './contents.js';
import { entryReply, pageReply } from './results.js';

const searchQuery = z.object(searchParameters);
const checkInFields = z.object({ major: bool.optional(), comment: text.optional(), mimeType: text.optional() });
const replaceFields = z.object({ mimeType: text.optional() });

const hasBody = (ctx: Context) => ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length'] ?? 0) > 0;

/**
 * The body of a check-in: multipart/form-data with an optional part `file` (new bytes, staged as a
 * pending upload) and text fields; or no body at all; or, for clients without a file, the fields as a
 * form or JSON object. Anything else is a 415.
 */
async function checkInBody(ctx: Context, services: Services, repository: string): Promise<{ fields: Record<string, string[]>; uploadId?: string }> {
  if (ctx.request.is('multipart/form-data')) {
    const { fields, upload } = await multipartUpload(ctx, services, repository, false);
    return { fields, uploadId: upload?.id };
  }
  if (!hasBody(ctx)) return { fields: {} };
  if (ctx.request.is('application/x-www-form-urlencoded', 'application/json')) {
    const form = await readForm(ctx);
    return { fields: Object.fromEntries(Object.entries(form).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])) };
  }
  throw new ServiceError(
    'unsupportedMediaType',
    `check-in takes multipart/form-data (optional part 'file', fields 'major' and 'comment') or no body, got '${ctx.request.type}'`,
  );
}

/**
 * Text fields of a multipart body, validated; a field missing from the body may come as a query
 * parameter (the spec sends parameters in the query unless marked form). A bad field drops the upload
 * that came with it.
 */
async function fieldsOf<T extends z.ZodType>(
  ctx: Context,
  services: Services,
  schema: T,
  names: string[],
  fields: Record<string, string[]>,
  uploadId: string | undefined,
): Promise<z.infer<T>> {
  try {
    const given = Object.fromEntries(names.map((name) => [name, singleField(fields, name) ?? ctx.query[name]]));
    return parse(schema, given);
  } catch (error) {
    await dropUpload({ uploadId }, services);
    throw error;
  }
}

const byId = (_ctx: Context, params: Record<string, string>) => ({ repository: params.repository!, id: params.id! });

/** Versioning of the content domain (DESIGN §4, §5): every `{id}` may name any version of the content. */
export const versionRoutes: GraphqlRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-out`,
    operation: 'check-out',
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-in`,
    operation: 'check-in',
    input: async (ctx, params, services) => {
      const { fields, uploadId } = await checkInBody(ctx, services, params.repository!);
      const { major, comment, mimeType } = await fieldsOf(ctx, services, checkInFields, ['major', 'comment', 'mimeType'], fields, uploadId);
      return {
        repository: params.repository!,
        id: params.id!,
        uploadId,
        input: { major: major ?? true, comment: comment ?? null, uploadId: uploadId ?? null, mimeType: mimeType || null },
      };
    },
    variables: ({ repository, id, input }) => ({ repository, id, input }),
    reply: entryReply,
    onFailure: dropUpload,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/cancel-check-out`,
    operation: 'cancel-check-out',
    input: byId,
    variables: (input) => input,
    reply: () => ({ status: 204 }),
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/lock`,
    operation: 'lock',
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/lock`,
    operation: 'unlock',
    input: byId,
    variables: (input) => input,
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/versions`,
    operation: 'versions',
    input: (ctx, params) => ({ repository: params.repository!, id: params.id!, query: parse(searchQuery, ctx.query) }),
    variables: ({ repository, id, query }) => ({ repository, id, options: searchOptions(query) }),
    reply: pageReply,
  }),
  route({
    method: 'PUT',
    path: `${contentDomain}/content/:id/resource`,
    operation: 'replace-resource',
    input: async (ctx, params, services) => {
      const { fields, upload } = await multipartUpload(ctx, services, params.repository!, true);
      const { mimeType } = await fieldsOf(ctx, services, replaceFields, ['mimeType'], fields, upload!.id);
      return { repository: params.repository!, id: params.id!, uploadId: upload!.id, input: { uploadId: upload!.id, mimeType: mimeType || null } };
    },
    variables: ({ repository, id, input }) => ({ repository, id, input }),
    reply: entryReply,
    onFailure: dropUpload,
  }),
];
