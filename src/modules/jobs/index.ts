/** The jobs capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { JobFailure, JobQueue, jobPriority, statementTimedOut } from './queue.js';
export type { JobHandler, JobOutcome, JobRun } from './queue.js';
export { addJobContents, othersWaiting, saveJobResult, saveLowlevelRequest } from './records.js';
