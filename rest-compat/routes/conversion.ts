import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { jobStates } from '../../src/modules/jobs/index.js';
import { CancelJobDocument, ConvertImageDocument, JobsDocument, JobStatusDocument, MergeToPdfDocument, RepresentationsDocument } from '../operations/documents.generated.js';
import { bool, limit, nonEmptyText, offset, parse } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { asyncJobResponseShape, representationShape, serviceRequestJobShape } from '../shapes/jobs.js';

const statusQuery = z.object({ jobId: nonEmptyText });
const representationsQuery = z.object({ includeInactive: bool.optional() });
const jobsQuery = z.object({
  state: z.enum(jobStates, { message: `must be one of ${jobStates.map((state) => `'${state}'`).join(', ')}` }).optional(),
  limit: limit.optional(),
  offset: offset.optional(),
});

/** The spec's answer to a started conversion (image or merge). */
const conversionResponse = ({ result }: { result: { duration: number; jobId: string } }) => ({
  body: { _type: 'svc.model.content.service.v1.request.conversion.ConversionResponse', duration: result.duration, jobId: result.jobId },
});

/** Conversion and the cache area of the content domain (spec endpoints 4 and 5, DESIGN §4 and §7). */
export const conversionRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/convert/image`,
    document: ConvertImageDocument,
    input: async (ctx, params, { inputs }) => ({ repository: params.repository!, input: inputs.fromJson('ImageConversionInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: conversionResponse,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/convert/merge`,
    document: MergeToPdfDocument,
    input: async (ctx, params, { inputs }) => ({ repository: params.repository!, input: inputs.fromJson('MergeConversionInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: conversionResponse,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs/status`,
    document: JobStatusDocument,
    input: (ctx, params) => ({ repository: params.repository!, jobId: parse(statusQuery, ctx.query).jobId }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/jobs/cancel`,
    document: CancelJobDocument,
    input: (ctx, params) => ({ repository: params.repository!, jobId: parse(statusQuery, ctx.query).jobId }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs`,
    document: JobsDocument,
    input: (ctx, params) => ({ repository: params.repository!, ...parse(jobsQuery, ctx.query) }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: { count: result.count, duration: result.duration, entries: result.entries.map(serviceRequestJobShape) } }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/representations`,
    document: RepresentationsDocument,
    input: (ctx, params) => ({ repository: params.repository!, contentId: params.id!, ...parse(representationsQuery, ctx.query) }),
    variables: (input) => input,
    reply: ({ result }) => ({
      body: {
        _type: 'svc.model.content.service.v1.request.representation.RepresentationsResponse',
        count: result.count,
        entries: result.entries.map(representationShape),
      },
    }),
  }),
];
