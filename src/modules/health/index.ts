/** The health capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { deepCheckJobName } from './async-deep-check.js';
export { ChecksResolver } from './checks.resolver.js';
export { deepCheckGraceMs } from './deep-check.js';
export { deepCheckJobHandler } from './deep-check-job.js';
export { DeepCheckResolver } from './deep-check.resolver.js';
export { HealthResolver } from './health.resolver.js';
export { checkHealth } from './operations.js';
