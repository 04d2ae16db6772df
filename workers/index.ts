import type { Services } from '../src/context.js';
import { convertJobName } from '../src/modules/conversion/operations.js';
import { convertHandler } from './jobs/convert.js';
import { startUploadSweeper, type BackgroundJob } from './upload-sweeper.js';

/**
 * The background work of a process with ROLE=all or ROLE=worker: the upload sweeper, and the handlers
 * of the job system (conversion; the asynchronous deep check and full-text reindexing join the same way).
 * Call before the job queue starts.
 */
export function startWorkers(services: Services): BackgroundJob[] {
  services.jobs.define(convertJobName, convertHandler(services));
  return [startUploadSweeper(services)];
}
