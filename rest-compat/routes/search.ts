import { z } from 'zod';
import type { RequestContext } from '../../src/context.js';
import { entryScope, type EntryScope } from '../../src/modules/entries/index.js';
import { entriesPageView, searchByCondition, searchByProperties, searchByText, type EntriesPage, type EntriesPageView, type PropertyFilter, type SearchOptions } from '../../src/modules/search/index.js';
import { SearchByConditionDocument, SearchByPropertiesDocument, SearchByTextDocument } from '../operations/documents.generated.js';
import { fieldsOf } from '../inputs.js';
import { nonEmptyText, searchPageParameters, withChildren } from '../params.js';
import { contentDomain, directRoute, type RestRoute } from '../route.js';
import type { Projection } from '../shapes/entries.js';
import { entriesResponseSchema } from '../shapes/schemas.js';
import { pageReply } from './results.js';

/**
 * A search's verb called directly, its page shaped as its document shapes it (directRoute); undefined
 * when the request asks for the virtual `Folder.children`, which the document runs (and bounds: its
 * cost check refuses a page of 1,000 folders' children). The filter and options are cast: query
 * parameters are text, never null, an ID a string (the inputs' schemas allow JSON's null and numbers).
 */
const searchDirectly = (
  context: RequestContext,
  { params, query }: { params: Record<string, string>; query: Projection },
  search: (scope: EntryScope) => Promise<EntriesPage>,
): Promise<{ result: EntriesPageView }> | undefined => {
  if (withChildren(query)) return undefined;
  return entryScope(context, params.repository!).then(async (scope) => ({ result: await entriesPageView(context, scope, await search(scope)) }));
};

/** Spec endpoint 2's own parameter: the condition (its language: docs/search.md). */
const conditionParameter = z.object({ condition: nonEmptyText.meta({ description: 'the condition (docs/search.md)', example: "name = 'report.pdf' and tags in ('q3')" }) });
/** Spec endpoint 3's own parameter: the search text (words, "phrases", -excluded, or, prefix*). */
const searchTextParameter = z.object({ searchText: nonEmptyText.meta({ description: 'words, "phrases", -excluded, or, prefix*', example: 'invoice -draft' }) });

export const searchRoutes: RestRoute[] = [
  directRoute({
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
    operation: (context, request, { filter, options }) => searchDirectly(context, request, (scope) => searchByProperties(scope, fieldsOf(request.query, filter) as PropertyFilter, fieldsOf(request.query, options) as SearchOptions)),
    reply: pageReply,
  }),
  directRoute({
    method: 'GET',
    path: `${contentDomain}/content/search/by-condition`,
    summary: 'Search by a condition (spec endpoint 2)',
    request: (inputs) => ({ query: conditionParameter.extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByConditionDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, condition: query.condition, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    operation: (context, request, { options }) => searchDirectly(context, request, (scope) => searchByCondition(scope, request.query.condition, fieldsOf(request.query, options) as SearchOptions)),
    reply: pageReply,
  }),
  directRoute({
    method: 'GET',
    path: `${contentDomain}/content/search/by-text`,
    summary: 'Full-text search (spec endpoint 3)',
    request: (inputs) => ({ query: searchTextParameter.extend(searchPageParameters(inputs).shape), options: inputs.text('SearchOptions') }),
    responses: { 200: entriesResponseSchema },
    document: SearchByTextDocument,
    variables: ({ params, query }, { options }) => ({ repository: params.repository!, searchText: query.searchText, options: fieldsOf(query, options), withChildren: withChildren(query) }),
    operation: (context, request, { options }) => searchDirectly(context, request, (scope) => searchByText(scope, request.query.searchText, fieldsOf(request.query, options) as SearchOptions)),
    reply: pageReply,
  }),
];
