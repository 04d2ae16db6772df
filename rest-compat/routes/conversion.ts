import { z } from 'zod';
import { jobStates } from '../../src/modules/jobs/index.js';
import { CancelJobDocument, ConvertImageDocument, JobsDocument, JobStatusDocument, MergeToPdfDocument, RepresentationsDocument } from '../operations/documents.generated.js';
import { bool, limit, nonEmptyText, offset } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { asyncJobResponseShape, representationShape, serviceRequestJobShape } from '../shapes/jobs.js';
import { asyncJobResponseSchema, conversionResponseSchema, jobsResponseSchema, representationsResponseSchema } from '../shapes/schemas.js';

const statusQuery = z.object({ jobId: nonEmptyText });
const representationsQuery = z.object({ includeInactive: bool.optional().meta({ description: "a deactivated content's too (its owner and administrators)" }) });
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
    summary: 'Convert a content to page images (spec endpoint 4): the answer names the job',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('ImageConversionInput') } as const }),
    responses: { 200: conversionResponseSchema },
    document: ConvertImageDocument,
    variables: ({ params, body }) => ({ repository: params.repository!, input: body }),
    reply: conversionResponse,
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/convert/merge`,
    summary: 'Merge contents, in order, into one PDF created as new content (DESIGN §12): the answer names the job',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('MergeConversionInput') } as const }),
    responses: { 200: conversionResponseSchema },
    document: MergeToPdfDocument,
    variables: ({ params, body }) => ({ repository: params.repository!, input: body }),
    reply: conversionResponse,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs/status`,
    summary: "A conversion job's status (spec endpoint 5)",
    request: () => ({ query: statusQuery }),
    responses: { 200: asyncJobResponseSchema },
    document: JobStatusDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, jobId: query.jobId }),
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'POST',
    path: `${contentDomain}/jobs/cancel`,
    summary: 'Cancel a pending or running job',
    request: () => ({ query: statusQuery }),
    responses: { 200: asyncJobResponseSchema },
    document: CancelJobDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, jobId: query.jobId }),
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs`,
    summary: 'The jobs of the cache area',
    request: () => ({ query: jobsQuery }),
    responses: { 200: jobsResponseSchema },
    document: JobsDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, ...query }),
    reply: ({ result }) => ({ body: { count: result.count, duration: result.duration, entries: result.entries.map(serviceRequestJobShape) } }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/representations`,
    summary: 'The page images of a content',
    request: () => ({ query: representationsQuery }),
    responses: { 200: representationsResponseSchema },
    document: RepresentationsDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, contentId: params.id!, ...query }),
    reply: ({ result }) => ({
      body: {
        _type: 'svc.model.content.service.v1.request.representation.RepresentationsResponse',
        count: result.count,
        entries: result.entries.map(representationShape),
      },
    }),
  }),
];
