import type { Services } from '../../src/context.js';
import { deepCheckJobResult, deepCheckOptionsOf } from '../../src/modules/health/index.js';
import { deepCheck } from '../../src/modules/health/index.js';
import type { JobHandler } from '../../src/modules/jobs/index.js';
import { jobScope } from './job-scope.js';

/**
 * The asynchronous deep check (spec endpoint 12): the same run as the synchronous one, as the
 * administrator who started it. The job ends Done whatever the scenarios found; its result carries the
 * check status, the message and the report's URL (a scenario's failure is the check's finding, not the job's).
 */
export function deepCheckHandler(services: Services): JobHandler {
  return async ({ record, em }) => {
    const { repository, principal } = await jobScope({ record, em }, services);
    const result = await deepCheck(services, principal, repository, deepCheckOptionsOf(services.config));
    return { result: deepCheckJobResult(result) };
  };
}
