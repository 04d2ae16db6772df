import type { Context } from 'koa';
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
import { nonEmptyText, parse } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { withRestDates } from '../shapes/dates.js';
import { asyncJobResponseShape } from '../shapes/jobs.js';

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
    const keyInput = (ctx: Context) => parse(z.object({ [parameter]: nonEmptyText }), ctx.query) as Record<typeof parameter, string>;
    return [
      route({
        method: 'GET',
        path: `${adminDomain}/repository/connection-check/${path}`,
        document: ConnectionCheckDocument,
        input: keyInput,
        variables: (input) => input,
        reply: checkReply,
      }),
      route({
        method: 'GET',
        path: `${adminDomain}/repository/deep-check/${path}`,
        document: DeepCheckDocument,
        input: keyInput,
        variables: (input) => input,
        reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.repository.DeepHealthCheckResponse', ...result } }),
      }),
      route({
        method: 'GET',
        path: `${adminDomain}/repository/async-deep-check/${path}`,
        document: StartDeepCheckDocument,
        input: keyInput,
        variables: (input) => input,
        reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.AdxAdminResponse', _id: result._id, duration: result.duration } }),
      }),
    ];
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/deep-check/report/:id`,
    document: DeepCheckReportDocument,
    input: (_ctx, params) => ({ reportId: params.id! }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: result, type: 'text/html; charset=utf-8', headers: reportHeaders }),
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/jobs/status`,
    document: AdministrationJobStatusDocument,
    input: (ctx) => parse(z.object({ jobId: nonEmptyText }), ctx.query),
    variables: (input) => input,
    reply: ({ result }) => ({ body: asyncJobResponseShape(result) }),
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/statistics`,
    document: RepositoryStatisticsDocument,
    input: (ctx) => parse(z.object({ repositoryId: nonEmptyText }), ctx.query),
    variables: (input) => input,
    reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.statistics.GetRepositoryStatisticsResponse', ...withRestDates(result) } }),
  }),
];
