import type { Context } from 'koa';
import { z } from 'zod';
import type { Services } from '../src/context.js';
import { illegalArguments, ServiceError } from '../src/errors.js';
import { readForm, readJsonObject } from '../src/http/body.js';
import { readMultipart } from '../src/http/multipart.js';
import { parse } from '../src/http/query.js';
import { holdingUploads, receiveMultipartUpload, scopeOfHttpRequest, stagingUploads, type UploadReceiver } from '../src/http/transfer.js';
import type { ReceivedBytes } from '../src/modules/entries/index.js';
import type { BodyDeclaration, ParsedRequest, RequestDeclaration } from './route.js';

/**
 * A multipart request's `file` part: staged as a pending upload of the caller (`uploadId`, for a
 * document that claims it), or held for the verb that writes it with its row (`received`, a body
 * declared `held`).
 */
export interface ReceivedUpload {
  uploadId?: string;
  received?: ReceivedBytes;
  /** drops the staged or held bytes (the operation failed, or a field was bad) */
  discard(): Promise<void>;
}

const noUpload: ReceivedUpload = { discard: async () => undefined };

/** A field given once is its text; given more than once, the list (the schema says whether a list is allowed). */
const textFields = (fields: Record<string, string | string[]>) =>
  Object.fromEntries(Object.entries(fields).map(([name, values]) => [name, Array.isArray(values) && values.length === 1 ? values[0]! : values]));

const hasBody = (ctx: Context) => ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length'] ?? 0) > 0;

/**
 * Refuses fields the body has no place for: a multipart field a client sends must not be lost without
 * a word (a check-in with `name` and `tags` fields answered 200 and kept neither).
 */
function requireKnownFields(schema: z.ZodObject, given: Iterable<string>): void {
  const known = Object.keys(schema.shape);
  const unknown = [...given].filter((field) => !known.includes(field));
  if (unknown.length > 0) {
    throw illegalArguments(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `'${f}'`).join(', ')} (known: ${known.join(', ')})`);
  }
}

/** Form fields, url-encoded, multipart without a file part, or a JSON object of them. */
async function formFields(ctx: Context): Promise<Record<string, string | string[]>> {
  if (!ctx.request.is('multipart/form-data')) return readForm(ctx);
  const { fields } = await readMultipart(ctx, {
    receive: async () => {
      throw illegalArguments('this form has no file part');
    },
    discard: async () => undefined,
  });
  return fields;
}

/**
 * An upload body: the `file` part staged as a pending upload (a document claims it), or held for a
 * verb that writes it with its row (`held`); then the fields validated (a bad one drops the bytes).
 */
async function uploadBody(ctx: Context, services: Services, repository: string, body: Extract<BodyDeclaration, { kind: 'upload' }>) {
  let fields: Record<string, string | string[]>;
  let upload = noUpload;
  if (ctx.request.is('multipart/form-data')) {
    const scope = await scopeOfHttpRequest(ctx, services, repository);
    /** the fields, and the file part through `receiver` (whose discard is the request's) */
    const receive = async <T>(receiver: UploadReceiver<T>, named: (file: T) => Omit<ReceivedUpload, 'discard'>) => {
      const received = await receiveMultipartUpload(ctx, scope, body.file === 'required', receiver);
      const file = received.upload;
      if (file) upload = { ...named(file), discard: () => receiver.discard(file) };
      return received.fields;
    };
    fields = body.held
      ? await receive(holdingUploads(scope), (bytes) => ({ received: bytes }))
      : // the call claims the upload itself (check-in, replace): its commit makes the pending row durable
        await receive(stagingUploads(scope, { claimedInThisRequest: true }), (staged) => ({ uploadId: staged.id }));
  } else if (body.orFields && !hasBody(ctx)) {
    fields = {};
  } else if (body.orFields && ctx.request.is('application/x-www-form-urlencoded', 'application/json')) {
    fields = await readForm(ctx);
  } else {
    throw new ServiceError(
      'unsupportedMediaType',
      `this call takes multipart/form-data (a part 'file'${body.file === 'optional' ? ', optional' : ''}, and the fields ${Object.keys(body.schema.shape).join(', ')})${body.orFields ? ' or no body' : ''}, got '${ctx.request.type || 'no content type'}'`,
    );
  }
  try {
    requireKnownFields(body.schema, Object.keys(fields));
    return { fields: parse(body.schema, textFields(fields), 'field'), upload };
  } catch (error) {
    await upload.discard();
    throw error;
  }
}

/** A path parameter: the repository's name or an entry's id, as the path gives it. */
const pathParameter = z.string().min(1, 'must not be empty');

const pathSchemas = new Map<string, z.ZodObject>();

/** The path parameters of a route path (`:repository`, `:id`) as a schema, made once per path (not per request: a zod schema costs to make). */
export function pathParameters(path: string): z.ZodObject {
  let schema = pathSchemas.get(path);
  if (!schema) pathSchemas.set(path, (schema = z.object(Object.fromEntries([...path.matchAll(/:(\w+)/g)].map(([, name]) => [name!, pathParameter])))));
  return schema;
}


async function readBody(ctx: Context, services: Services, body: BodyDeclaration | undefined, repository: string | undefined): Promise<unknown> {
  if (!body) return undefined;
  if (body.kind === 'json') return parse(body.schema, await readJsonObject(ctx), 'body');
  if (body.kind === 'form') return parse(body.schema, textFields(await formFields(ctx)), 'form field');
  return uploadBody(ctx, services, repository ?? '', body);
}

/**
 * Validates a request against its route's declaration only: path parameters, query parameters, body.
 * A failure is a 400 (415 for a body of another media type) naming each field and what is wrong.
 */
export async function readRequest(ctx: Context, services: Services, path: string, declaration: RequestDeclaration): Promise<ParsedRequest<RequestDeclaration>> {
  const params = parse(pathParameters(path), ctx.params ?? {}, 'path parameter') as Record<string, string>;
  const query = declaration.query ? parse(declaration.query, ctx.query) : {};
  const body = await readBody(ctx, services, declaration.body, params.repository);
  // the shapes the declaration's schemas gave
  return { params, query, body } as ParsedRequest<RequestDeclaration>;
}

/** Drops what reading the request staged (an upload), when the operation then fails. */
export async function discardStaged(request: ParsedRequest<RequestDeclaration>): Promise<void> {
  const body = request.body as { upload?: ReceivedUpload } | undefined;
  await body?.upload?.discard();
}
