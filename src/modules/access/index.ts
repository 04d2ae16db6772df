/** The access capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { authorize } from './policy.js';
export { mayAdminister, requireRole } from './roles.js';
