import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { reasonStatus, type ReasonCode } from '../src/errors.js';
import { adminDomain } from '../src/http/session.js';
import { pathParameters } from './request.js';
import type { HttpMethod, RequestDeclaration, ResponseDeclaration, RouteDescription } from './route.js';
import { errorResponseSchema } from './shapes/schemas.js';

/**
 * What the OpenAPI document says of one path and method: the table's routes (route.ts) and the byte
 * transfer's (transfer-paths.ts) alike. `errors`: the error statuses beside those every call may answer.
 */
export interface OperationDeclaration extends RouteDescription {
  method: HttpMethod | 'HEAD';
  path: string;
  request: RequestDeclaration;
  responses: Partial<Record<number, ResponseDeclaration>>;
  errors?: readonly number[];
}

/** Who may call a path (DESIGN §3): anyone (logging in), a session, or an administrator's (the administration domain). */
export type CallerRule = 'anyone' | 'session' | 'admin';
/** Who may call a path: anyone (logging in), a session, or an administrator (the administration domain, DESIGN §3) — but for its audit trail, where a user reads its own logins (DESIGN §11; the operation filters). */
export const callerRule = (path: string): CallerRule =>
  path === '/authenticate' ? 'anyone' : path.startsWith(adminDomain) && path !== `${adminDomain}/audit` ? 'admin' : 'session';

/** The tag of a path: its domain (DESIGN §4). */
const tagOf = (path: string) => (path.startsWith(adminDomain) ? 'administration' : path.startsWith('/access.svc.content.') ? 'content' : 'session');
const tags = [
  { name: 'content', description: 'The content domain `access.svc.content.<repository_name>/v1`: folders, contents, versions, search, conversion, ACLs' },
  { name: 'administration', description: 'The administration domain `access.svc.admin/v1` (administrators): repositories, users, groups, policies, types, checks' },
  { name: 'session', description: 'Logging in and out' },
];

/** `/access.svc.content.:repository/v1/folder/:id` → `/access.svc.content.{repository}/v1/folder/{id}` */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

const reasonOf = (status: number) => (Object.keys(reasonStatus) as ReasonCode[]).find((code) => reasonStatus[code] === status)!;

/** The error answers of an operation: what every call may answer, what its caller rule and its body add. */
export function errorStatuses(operation: OperationDeclaration): number[] {
  const statuses = new Set<number>([400, 404, 429, 500, 503, ...(operation.errors ?? [])]);
  if (callerRule(operation.path) !== 'anyone') for (const status of [401, 403, 409]) statuses.add(status);
  else statuses.add(401);
  if (operation.request.body) for (const status of [413, 415]) statuses.add(status);
  return [...statuses].sort();
}

/** A declared answer's media type and schema: JSON unless it says otherwise. */
export const mediaOf = (declaration: Exclude<ResponseDeclaration, null>): { type: string; schema: z.ZodType } =>
  declaration instanceof z.ZodType ? { type: 'application/json', schema: declaration } : declaration;

const bodyMediaTypes = (body: NonNullable<RequestDeclaration['body']>): string[] => {
  if (body.kind === 'json') return ['application/json'];
  if (body.kind === 'form') return ['application/x-www-form-urlencoded', 'multipart/form-data'];
  return ['multipart/form-data'];
};

/** The schema a body is described by: an upload's has its part `file` beside the fields. */
function bodySchema(body: NonNullable<RequestDeclaration['body']>): z.ZodType {
  if (body.kind !== 'upload') return body.schema;
  const file = z.string().meta({ contentMediaType: 'application/octet-stream', description: "the file's bytes" });
  return body.schema.extend({ file: body.file === 'required' ? file : file.optional() });
}

function operationObject(operation: OperationDeclaration): ZodOpenApiOperationObject {
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, declaration] of Object.entries(operation.responses)) {
    const media = declaration ? mediaOf(declaration) : undefined;
    responses[status as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: media ? `${status}` : `${status}: no body`,
      ...(media && { content: { [media.type]: { schema: media.schema } } }),
    };
  }
  for (const status of errorStatuses(operation)) {
    responses[String(status) as `4${string}`] = { description: reasonOf(status), content: { 'application/json': { schema: errorResponseSchema } } };
  }
  const body = operation.request.body;
  return {
    tags: [tagOf(operation.path)],
    summary: operation.summary,
    ...(operation.description && { description: operation.description }),
    operationId: `${operation.method.toLowerCase()}${operation.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    ...(callerRule(operation.path) === 'anyone' && { security: [] }),
    requestParams: { path: pathParameters(operation.path), ...(operation.request.query && { query: operation.request.query }) },
    ...(body && { requestBody: { required: body.kind !== 'upload' || body.file === 'required' || !body.orFields, content: Object.fromEntries(bodyMediaTypes(body).map((type) => [type, { schema: bodySchema(body) }])) } }),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the REST paths (DESIGN §13), made at start from the same zod schemas
 * that validate the requests and describe the answers.
 */
export function openApiDocument(operations: readonly OperationDeclaration[], { basePath, version }: { basePath: string; version: string }) {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of operations) {
    const item = (paths[openApiPath(operation.path)] ??= {});
    item[operation.method.toLowerCase() as 'get'] = operationObject(operation);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Content repository service: REST API',
      version,
      description:
        'The REST paths of the content repository service (the spec and DESIGN §4, §10–§12). The session is the `sessionId` query parameter (or `Authorization: Bearer <sessionId>`), from `POST /authenticate`. Every error is an `ErrorResponse`. The content domain is `access.svc.content.{repository}/v1`, the administration domain `access.svc.admin/v1`.',
    },
    servers: [{ url: `${basePath}/api/v1` }],
    tags,
    security: [{ sessionId: [] }, { bearer: [] }],
    components: {
      securitySchemes: {
        sessionId: { type: 'apiKey', in: 'query', name: 'sessionId', description: 'the session id `POST /authenticate` answers' },
        bearer: { type: 'http', scheme: 'bearer', description: 'the same session id as `Authorization: Bearer <sessionId>`' },
      },
    },
    paths,
  });
}

