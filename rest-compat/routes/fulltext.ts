import { z } from 'zod';
import { ReindexDocument } from '../operations/documents.generated.js';
import { bool } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { jobIdSchema } from '../shapes/schemas.js';

const reindexQuery = z.object({ force: bool.optional().meta({ description: 'true: the resources marked as failed too (docs/search.md)' }) });

/** Full text of the content domain: the reindex of a repository (administrators; docs/search.md). */
export const fullTextRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/reindex`,
    summary: 'Rebuild the full-text index of the repository (administrators)',
    request: () => ({ query: reindexQuery }),
    responses: { 200: jobIdSchema },
    document: ReindexDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, ...query }),
    reply: ({ result }) => ({ body: { jobId: result.jobId } }),
  }),
];
