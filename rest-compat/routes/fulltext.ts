import { ReindexDocument } from '../operations/documents.generated.js';
import { contentDomain, route, type RestRoute } from '../route.js';

/** Full text of the content domain: the reindex of a repository (administrators; docs/search.md). */
export const fullTextRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${contentDomain}/reindex`,
    document: ReindexDocument,
    input: (_ctx, params) => ({ repository: params.repository! }),
    variables: (input) => input,
    reply: ({ result }) => ({ body: { jobId: result.jobId } }),
  }),
];
