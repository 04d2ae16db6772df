import { z } from 'zod';
import { SearchByConditionDocument, SearchByPropertiesDocument, SearchByTextDocument } from '../operations/documents.generated.js';
import { fieldsOf } from '../inputs.js';
import { nonEmptyText, searchPageParameters, withChildren } from '../params.js';
import { contentDomain, route, type RestRoute } from '../route.js';
import { entriesResponseSchema } from '../shapes/schemas.js';
import { pageReply } from './results.js';

/** Spec endpoint 2's own parameter: the condition (its language: docs/search.md). */
const conditionParameter = z.object({ condition: nonEmptyText.meta({ description: 'the condition (docs/search.md)', example: "name = 'report.pdf' and tags in ('q3')" }) });
/** Spec endpoint 3's own parameter: the search text (words, "phrases", -excluded, or, prefix*). */
const searchTextParameter = z.object({ searchText: nonEmptyText.meta({ description: 'words, "phrases", -excluded, or, prefix*', example: 'invoice -draft' }) });

export const searchRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/content/search`,
    summary: 'Search by properties (spec endpoint 1)',
    request: (inputs) => ({
      query: inputs.text('PropertyFilter').extend(searchPageParameters(inputs).shape),
      filter: inputs.text('PropertyFilter'),
      options: inputs.text('SearchOptions'),
    }),
    responses: { 200: entriesResponseSchema },
    document: SearchByPropertiesDocument,
    variables: ({ params, query }, { filter, options }) => ({ repository: params.repository!, filter: fieldsOf(query, filter), options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-condition`,
    summary: 'Search by a condition (spec endpoint 2)',
    request: (inputs) => ({ query: conditionParameter.extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByConditionDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, condition: query.condition, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/content/search/by-text`,
    summary: 'Full-text search (spec endpoint 3)',
    request: (inputs) => ({ query: searchTextParameter.extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByTextDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, searchText: query.searchText, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    reply: pageReply,
  }),
];
