import type { GraphqlRoute } from '../route.js';
import { contentRoutes } from './contents.js';
import { folderRoutes } from './folders.js';
import { searchRoutes } from './search.js';
import { sessionRoutes } from './session.js';

/** The REST table: every path of the spec and DESIGN §4 that runs a GraphQL operation. */
export const graphqlRoutes: GraphqlRoute[] = [...sessionRoutes, ...folderRoutes, ...searchRoutes, ...contentRoutes];
