import { z } from 'zod';
import { ReindexDocument } from '../operations/documents.generated.js';
import { bool, parse } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';

const reindexQuery = z.object({ force: bool.optional() });

/** Full text of the content domain: the reindex of a repository (administrators; docs/search.md). */
export const fullTextRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/reindex`,
    document: ReindexDocument,
    input: (ctx, params) => ({ repository: params.repository!, ...parse(reindexQuery, ctx.query) }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: { jobId: result.jobId } }),
  }),
];
