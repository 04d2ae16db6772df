import {
  CancelCheckOutDocument,
  CheckInDocument,
  CheckOutDocument,
  LockDocument,
  ReplaceResourceDocument,
  UnlockDocument,
  VersionsDocument,
} from '../operations/documents.generated.js';
import { fieldsOf } from '../inputs.js';
import { searchPageParameters } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { contentSchema, entriesResponseSchema } from '../shapes/schemas.js';
import { byId, entryReply, noContentReply, pageReply } from './results.js';

/** Versioning of the content domain (DESIGN §4, §5): every `{id}` may name any version of the content. */
export const versionRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-out`,
    summary: 'Check out: the answer is the WORKING_COPY',
    responses: { 200: contentSchema },
    document: CheckOutDocument,
    variables: byId,
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/check-in`,
    summary: 'Check in: the answer is the new CURRENT version',
    description:
      'multipart/form-data with an optional part `file` (new bytes) and the fields `major` (default true), `comment`, `mimeType`; or no body; or those fields as a form or JSON object. The spec sends them in the query too; a field of the body wins.',
    request: (inputs) => {
      const fields = inputs.text('CheckInInput').omit({ uploadId: true });
      return { query: fields, body: { kind: 'upload', schema: fields, file: 'optional', orFields: true } as const };
    },
    responses: { 200: contentSchema },
    document: CheckInDocument,
    variables: (request) => ({ ...byId(request), input: { ...request.query, ...request.body.fields, uploadId: request.body.upload.uploadId } }),
    reply: entryReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/cancel-check-out`,
    summary: 'Cancel a check-out: the working copy is dropped',
    responses: { 204: null },
    document: CancelCheckOutDocument,
    variables: byId,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/content/:id/lock`,
    summary: 'Lock a content',
    responses: { 200: contentSchema },
    document: LockDocument,
    variables: byId,
    reply: entryReply,
  }),
  route({
    method: 'DELETE',
    path: `${contentDomain}/content/:id/lock`,
    summary: 'Unlock a content',
    responses: { 200: contentSchema },
    document: UnlockDocument,
    variables: byId,
    reply: entryReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/versions`,
    summary: 'The versions of a content, newest first',
    request: (inputs) => ({ query: searchPageParameters(inputs), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: VersionsDocument,
    variables: (request, { options }) => ({ ...byId(request), options: fieldsOf(request.query, options) }),
    reply: pageReply,
  }),
  route({
    method: 'PUT',
    path: `${contentDomain}/content/:id/resource`,
    summary: 'Replace the bytes: a new minor version',
    description: 'multipart/form-data: the part `file`, and the fields of ReplaceResourceInput (also taken from the query; a field of the body wins).',
    request: (inputs) => {
      const fields = inputs.text('ReplaceResourceInput').omit({ uploadId: true });
      return { query: fields, body: { kind: 'upload', schema: fields, file: 'required' } as const };
    },
    responses: { 200: contentSchema },
    document: ReplaceResourceDocument,
    variables: (request) => ({ ...byId(request), input: { ...request.query, ...request.body.fields, uploadId: request.body.upload.uploadId! } }),
    reply: entryReply,
  }),
];
