import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { integer, nonEmptyText, parse } from '../params.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { asyncJobResponseShape, representationShape, serviceRequestJobShape } from '../shapes/jobs.js';

const convertBody = z
  .object({
    contentId: z.string({ message: 'must be a string' }).min(1, 'must not be empty'),
    resultAction: z.enum(['NEW_CONTENT', 'CONTENT_REPRESENTATION'], { message: "must be 'NEW_CONTENT' or 'CONTENT_REPRESENTATION'" }),
    targetFormat: z
      .string({ message: 'must be a string' })
      .transform((v) => v.toLowerCase())
      .pipe(z.enum(['png', 'jpeg', 'webp', 'tiff'], { message: "must be one of 'png', 'jpeg', 'webp', 'tiff'" })),
    newContentSpecification: z.record(z.string(), z.unknown(), { message: 'must be an object' }).nullish(),
  })
  .strict();
const statusQuery = z.object({ jobId: nonEmptyText }).passthrough();
const jobsQuery = z
  .object({
    state: z.enum(['pending', 'running', 'Done', 'panic', 'cancelled'], { message: "must be one of 'pending', 'running', 'Done', 'panic', 'cancelled'" }).optional(),
    limit: integer.optional(),
    offset: integer.optional(),
  })
  .passthrough();

/** Conversion and the cache area of the content domain (spec endpoints 4 and 5, DESIGN §4). */
export const conversionRoutes: GraphqlRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/convert/image`,
    operation: 'convert-image',
    input: async (ctx, params) => ({ repository: params.repository!, body: parse(convertBody, await readJsonObject(ctx), 'body') }),
    variables: ({ repository, body }) => ({ repository, input: body }),
    reply: (result) => ({ body: { _type: 'svc.model.content.service.v1.request.conversion.ConversionResponse', ...(result as object) } }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs/status`,
    operation: 'job-status',
    input: (ctx, params) => ({ repository: params.repository!, jobId: parse(statusQuery, ctx.query).jobId }),
    variables: (input) => input,
    reply: (result) => ({ body: asyncJobResponseShape(result as Parameters<typeof asyncJobResponseShape>[0]) }),
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/jobs`,
    operation: 'jobs',
    input: (ctx, params) => ({ repository: params.repository!, ...parse(jobsQuery, ctx.query) }),
    variables: ({ repository, state, limit, offset }) => ({ repository, state, limit, offset }),
    reply: (result) => {
      const page = result as { count: number; duration: number; entries: Record<string, unknown>[] };
      return { body: { count: page.count, duration: page.duration, entries: page.entries.map(serviceRequestJobShape) } };
    },
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/:id/representations`,
    operation: 'representations',
    input: (_ctx, params) => ({ repository: params.repository!, contentId: params.id! }),
    variables: (input) => input,
    reply: (result) => {
      const page = result as { count: number; entries: Record<string, unknown>[] };
      return {
        body: {
          _type: 'svc.model.content.service.v1.request.representation.RepresentationsResponse',
          count: page.count,
          entries: page.entries.map(representationShape),
        },
      };
    },
  }),
];
