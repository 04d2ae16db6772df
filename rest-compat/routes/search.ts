import { SearchByPropertiesDocument } from '../operations/documents.generated.js';
import { searchPage, withChildren } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { pageReply } from './results.js';

export const searchRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/content/search`,
    document: SearchByPropertiesDocument,
    // spec endpoint 1: the property filters are the fields of the GraphQL PropertyFilter
    input: (ctx, params, { inputs }) => ({ repository: params.repository!, filter: inputs.fromText('PropertyFilter', ctx.query), ...searchPage(ctx, inputs) }),
    variables: ({ repository, filter, options, projection }) => ({ repository, filter, options, withChildren: withChildren(projection) }),
    reply: pageReply,
  }),
];
