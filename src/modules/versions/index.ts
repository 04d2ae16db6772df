/** The versions capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { VersionsResolver } from './versions.resolver.js';
