import type { Services } from '../src/context.js';
import { startUploadSweeper, type BackgroundJob } from './upload-sweeper.js';

/**
 * The background work of a process with ROLE=all or ROLE=worker. Conversion, the asynchronous deep
 * check and full-text reindexing join here as Agenda jobs (DESIGN §1, §7).
 */
export function startWorkers(services: Services): BackgroundJob[] {
  return [startUploadSweeper(services)];
}
