/** The policies capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { PoliciesResolver } from './policies.resolver.js';
