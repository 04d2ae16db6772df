import { z } from 'zod';
import { representationQuery } from '../src/http/representation-download.js';
import { downloadQuery } from '../src/http/transfer.js';
import { contentDomain } from '../src/http/session.js';
import type { OperationDeclaration } from './openapi.js';

/*
 * The byte transfer's paths (src/http/transfer.ts, representation-download.ts: plain HTTP handlers,
 * not GraphQL operations) as the OpenAPI document describes them, from the schemas their handlers
 * validate with.
 */

const bytes = (type: string) => ({ type, schema: z.string().meta({ contentMediaType: type, description: 'the bytes' }) });
const uploadQuery = z.object({ fileName: z.string().optional().meta({ description: 'the file name of a raw upload (default: upload)' }) });

export const transferOperations: OperationDeclaration[] = [
  {
    method: 'POST',
    path: `${contentDomain}/uploads`,
    summary: 'Upload bytes for a GraphQL mutation: the answer is the id to pass as uploadId',
    description: 'multipart/form-data with a part `file`, or the raw bytes as the body (their type from Content-Type, else sniffed).',
    request: {
      query: uploadQuery,
      body: { kind: 'upload', schema: z.object({}), file: 'required' },
    },
    responses: {
      201: z.strictObject({ uploadId: z.string(), name: z.string(), mimeType: z.string(), fileSize: z.number().int().min(0), md5: z.string() }).meta({ id: 'Upload' }),
    },
  },
  {
    method: 'GET',
    path: `${contentDomain}/content/:id/download`,
    summary: "A content's bytes: Range, ETag (the md5), If-None-Match, Content-Disposition",
    request: { query: downloadQuery },
    responses: { 200: bytes('application/octet-stream'), 206: bytes('application/octet-stream'), 304: null },
    errors: [412, 416],
  },
  {
    method: 'GET',
    path: `${contentDomain}/representations/:id/download`,
    summary: 'The bytes of a page image',
    request: { query: representationQuery },
    responses: { 200: bytes('image/png') },
  },
  {
    method: 'GET',
    path: `${contentDomain}/content/:id/thumbnail`,
    summary: "A content's first-page thumbnail (PNG, at most 256 px a side): ETag, If-None-Match; 404 until it is made, and for kinds that have none",
    request: { query: representationQuery },
    responses: { 200: bytes('image/png'), 304: null },
  },
];
