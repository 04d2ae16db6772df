import type { Services } from '../../context.js';
import { jobScope } from '../entries/scope-of-job.js';
import type { JobHandler } from '../jobs/queue.js';
import { deepCheckJobResult, deepCheckOptionsOf } from './async-deep-check.js';
import { deepCheck } from './deep-check.js';

/**
 * The asynchronous deep check (spec endpoint 12): the same run as the synchronous one, as the
 * administrator who started it. The job ends Done whatever the scenarios found; its result carries the
 * check status, the message and the report's URL (a scenario's failure is the check's finding, not the job's).
 */
export function deepCheckJobHandler(services: Services): JobHandler {
  return async ({ record, em }) => {
    const { repository, principal } = await jobScope({ record, em }, services);
    const result = await deepCheck(services, principal, repository, deepCheckOptionsOf(services.config));
    return { result: deepCheckJobResult(result) };
  };
}
