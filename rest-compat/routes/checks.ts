import { z } from 'zod';
import { ConnectionCheckDocument, RepositoryStatisticsDocument, type ConnectionCheckQuery } from '../operations/documents.generated.js';
import { nonEmptyText, parse } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';

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

/** Spec endpoints 10 and 13. */
export const checkRoutes: RestRoute[] = [
  ...repositoryKeys.map(([path, parameter]) =>
    route({
      method: 'GET',
      path: `${adminDomain}/repository/connection-check/${path}`,
      document: ConnectionCheckDocument,
      input: (ctx) => parse(z.object({ [parameter]: nonEmptyText }), ctx.query) as Record<typeof parameter, string>,
      variables: (input) => input,
      reply: checkReply,
    }),
  ),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/statistics`,
    document: RepositoryStatisticsDocument,
    input: (ctx) => parse(z.object({ repositoryId: nonEmptyText }), ctx.query),
    variables: (input) => input,
    reply: ({ result }) => ({ body: { _type: 'svc.model.deployment.service.statistics.GetRepositoryStatisticsResponse', ...result } }),
  }),
];
