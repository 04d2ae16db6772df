import { z } from 'zod';
import {
  AdministrationJobStatusDocument,
  ConnectionCheckDocument,
  DeepCheckDocument,
  DeepCheckReportDocument,
  RepositoryStatisticsDocument,
  StartDeepCheckDocument,
  type ConnectionCheckQuery,
} from '../operations/documents.generated.js';
import { nonEmptyText } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { withRestDates } from '../shapes/dates.js';
import { asyncJobResponseShape } from '../shapes/jobs.js';
import { adminResponseSchema, asyncJobResponseSchema, checkResponseSchema, deepCheckResponseSchema, htmlPage, statisticsResponseSchema } from '../shapes/schemas.js';
import { byRepositoryId } from './admin.js';

/** The spec's three ways to name the repository of a check: by id, by name, by technical name. */
const repositoryKeys = [
  ['by-id', 'repositoryId'],
  ['by-name', 'repositoryName'],
  ['by-technical-name', 'repositoryTechnicalName'],
] as const;

/** Spec "Check responses": the record with its `_type`, each entry with its own. */
const checkReply = ({ result }: ConnectionCheckQuery) => ({
  body: {
    _type: 'svc.model.deployment.service.repository.CheckResponse',
    ...result,
    entries: result.entries.map((entry) => ({ _type: 'com.svc.model.check.service.CheckResultEntry', ...entry })),
  },
});

/** The report is a page of its own: styles inline, nothing else loaded, no scripts; an administrator's, kept by no shared cache. */
const reportHeaders = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'private, no-cache',
};

/** Spec endpoints 10, 11, 12 and 13; the deep check report and the administration jobs' status (DESIGN §4). */
export const checkRoutes: RestRoute[] = [
  ...repositoryKeys.flatMap(([path, parameter]) => {
    const request = () => ({ query: z.object({ [parameter]: nonEmptyText }) as z.ZodObject<Record<typeof parameter, typeof nonEmptyText>> });
    return [
      route({
        method: 'GET',
        path: `${adminDomain}/repository/connection-check/${path}`,
        summary: `Connection check of a repository ${path.replaceAll('-', ' ')} (spec endpoint 10)`,
        request,
        responses: { 200: checkResponseSchema },
        document: ConnectionCheckDocument,
        variables: ({ query }) => query,
        reply: checkReply,
      }),
      route({
        method: 'GET',
        path: `${adminDomain}/repository/deep-check/${path}`,
        summary: `Deep health check of a repository ${path.replaceAll('-', ' ')} (spec endpoint 11)`,
        request,
        responses: { 200: deepCheckResponseSchema },
        document: DeepCheckDocument,
        variables: ({ query }) => query,
        reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.repository.DeepHealthCheckResponse', ...result } }),
      }),
      route({
        method: 'GET',
        path: `${adminDomain}/repository/async-deep-check/${path}`,
        summary: `Start an asynchronous deep check of a repository ${path.replaceAll('-', ' ')} (spec endpoint 12)`,
        request,
        responses: { 200: adminResponseSchema },
        document: StartDeepCheckDocument,
        variables: ({ query }) => query,
        reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.AdxAdminResponse', _id: result._id, duration: result.duration } }),
      }),
    ];
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/deep-check/report/:id`,
    summary: 'The HTML report of a deep check (its reportUrl)',
    responses: { 200: htmlPage },
    document: DeepCheckReportDocument,
    variables: ({ params }) => ({ reportId: params.id! }),
    reply: ({ result }) => ({ body: result, type: 'text/html; charset=utf-8', headers: reportHeaders }),
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/jobs/status`,
    summary: 'The status of an administration job (an asynchronous deep check)',
    request: () => ({ query: z.object({ jobId: nonEmptyText }) }),
    responses: { 200: asyncJobResponseSchema },
    document: AdministrationJobStatusDocument,
    variables: ({ query }) => query,
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/statistics`,
    summary: 'Repository statistics (spec endpoint 13)',
    request: () => ({ query: byRepositoryId }),
    responses: { 200: statisticsResponseSchema },
    document: RepositoryStatisticsDocument,
    variables: ({ query }) => query,
    reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.statistics.GetRepositoryStatisticsResponse', ...withRestDates(result) } }),
  }),
];
