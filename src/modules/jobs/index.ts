/** The jobs capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { JobFailure, JobQueue } from './queue.js';
export { finalStates, jobStates } from './records.js';
