import type { Services } from '../src/context.js';
import { convertJobName } from '../src/modules/conversion/index.js';
import { extractTextJobName, reindexJobName } from '../src/modules/fulltext/index.js';
import { deepCheckJobName } from '../src/modules/health/index.js';
import { convertHandler } from './jobs/convert.js';
import { extractionPool } from './extract/extract-process.js';
import { renderPool } from './render/render-process.js';
import { deepCheckHandler } from './jobs/deep-check.js';
import { extractTextHandler, reindexHandler, startExtractionSweeper } from './jobs/extract-text.js';
import { startPeriodic, type BackgroundJob } from './periodic.js';
import { startUnreferencedFileSweeper, startUploadSweeper } from './upload-sweeper.js';

/**
 * The background work of a process with ROLE=all or ROLE=worker: the upload and text-extraction sweepers, and the handlers
 * of the job system (conversion, text extraction and reindexing, the asynchronous deep check).
 * Call before the job queue starts.
 */
export function startWorkers(services: Services): BackgroundJob[] {
  // render processes stay warm between conversions, one for each job this process may run at once
  const renderProcesses = renderPool(services.config.CONV_RENDER_MEMORY_MB, services.config.JOB_CONCURRENCY);
  services.jobs.define(convertJobName, convertHandler(services, renderProcesses));
  // likewise the extraction processes, which read every text (docs/search.md)
  const extractionProcesses = extractionPool(services.config.FULLTEXT_EXTRACT_MEMORY_MB, services.config.JOB_CONCURRENCY);
  services.jobs.define(extractTextJobName, extractTextHandler(services, extractionProcesses));
  services.jobs.define(reindexJobName, reindexHandler(services, extractionProcesses));
  services.jobs.define(deepCheckJobName, deepCheckHandler(services), { waitsForJobs: true });
  // a process that takes no jobs leaves the sweep to those that do
  const sweepers = services.config.JOB_CONCURRENCY > 0 ? [startExtractionSweeper(services), startJobSweeper(services)] : [];
  return [
    startUploadSweeper(services),
    startUnreferencedFileSweeper(services),
    ...sweepers,
    { name: 'render processes', stop: async () => renderProcesses.close() },
    { name: 'extraction processes', stop: async () => extractionProcesses.close() },
  ];
}

/** Every JOB_SWEEP_MS, a queue job for each kind whose records have waited pending as long (JobQueue.requeueWaiting). */
function startJobSweeper(services: Services): BackgroundJob {
  const everyMs = services.config.JOB_SWEEP_MS;
  return startPeriodic(services.logger, 'job-sweeper', everyMs, async () => {
    const kinds = await services.jobs.requeueWaiting(everyMs);
    if (kinds.length > 0) services.logger.info({ kinds }, 'queued a job for kinds whose records waited pending');
  });
}
