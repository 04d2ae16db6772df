import { z } from 'zod';
import { bool, list, parse, searchOptions, searchParameters, withChildren, text, versionStatus } from '../params.js';
import { contentDomain, route, type GraphqlRoute } from '../route.js';
import { pageReply } from './results.js';

/** Spec endpoint 1: the property filters. */
const propertySearchQuery = z.object(searchParameters).extend({
  chronicalId: text.optional(),
  createdBy: text.optional(),
  isLocked: bool.optional(),
  lastModifiedBy: text.optional(),
  lockedBy: text.optional(),
  mimeType: text.optional(),
  name: text.optional(),
  owner: text.optional(),
  parentId: text.optional(),
  tags: list.optional(),
  version: text.optional(),
  versionStatus: versionStatus.optional(),
});

export const searchRoutes: GraphqlRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/content/search`,
    operation: 'search-by-properties',
    input: (ctx, params) => ({ repository: params.repository!, query: parse(propertySearchQuery, ctx.query) }),
    variables: ({ repository, query }) => {
      const { chronicalId, createdBy, isLocked, lastModifiedBy, lockedBy, mimeType, name, owner, parentId, tags, version, versionStatus } = query;
      return {
        repository,
        filter: { chronicalId, createdBy, isLocked, lastModifiedBy, lockedBy, mimeType, name, owner, parentId, tags, version, versionStatus },
        options: searchOptions(query),
        withChildren: withChildren(query),
      };
    },
    reply: pageReply,
  }),
];
