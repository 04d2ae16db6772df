import { z } from 'zod';
import { SearchByConditionDocument, SearchByPropertiesDocument, SearchByTextDocument } from '../operations/documents.generated.js';
import { nonEmptyText, parse, searchPage, withChildren } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { pageReply } from './results.js';

/** Spec endpoint 2's own parameter: the condition (its language: docs/search.md). */
const conditionParameter = z.object({ condition: nonEmptyText });
/** Spec endpoint 3's own parameter: the search text (words, "phrases", -excluded, or, prefix*). */
const searchTextParameter = z.object({ searchText: nonEmptyText });

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
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-condition`,
    document: SearchByConditionDocument,
    input: (ctx, params, { inputs }) => ({ repository: params.repository!, ...parse(conditionParameter, ctx.query), ...searchPage(ctx, inputs) }),
    variables: ({ repository, condition, options, projection }) => ({ repository, condition, options, withChildren: withChildren(projection) }),
    reply: pageReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-text`,
    document: SearchByTextDocument,
    input: (ctx, params, { inputs }) => ({ repository: params.repository!, ...parse(searchTextParameter, ctx.query), ...searchPage(ctx, inputs) }),
    variables: ({ repository, searchText, options, projection }) => ({ repository, searchText, options, withChildren: withChildren(projection) }),
    reply: pageReply,
  }),
];
