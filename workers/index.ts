import type { Services } from '../src/context.js';
import { convertJobHandler, convertJobName, mergeJobHandler, mergeJobName, submitLostThumbnails, thumbnailJobHandler, thumbnailJobName } from '../src/modules/conversion/index.js';
import { extractTextJobHandler, extractTextJobName, reindexJobHandler, reindexJobName, submitLostExtractions } from '../src/modules/fulltext/index.js';
import { deliverDue } from '../src/modules/webhooks/index.js';
import { deepCheckJobHandler, deepCheckJobName } from '../src/modules/health/index.js';
import { extractionPool, textExtractor } from './extract/extract-process.js';
import { mergePool, pdfMerger } from './merge/merge-process.js';
import { pageRenderer, renderPool } from './render/render-process.js';
import { startAuditRetention } from './audit-retention.js';
import { startPeriodic, type BackgroundJob } from './periodic.js';
import { startUnreferencedFileSweeper, startUploadSweeper } from './upload-sweeper.js';

/**
 * The background work of a process with ROLE=all or ROLE=worker: the upload, text-extraction and thumbnail sweepers, webhook deliveries, the audit
 * trail's retention, and the handlers
 * of the job system (conversion, text extraction and reindexing, the asynchronous deep check), each given the
 * child processes it needs. Call before the job queue starts.
 */
export function startWorkers(services: Services): BackgroundJob[] {
  // render processes stay warm between conversions, one for each job this process may run at once (and its previews' slot)
  const renderProcesses = renderPool(services.config.CONV_RENDER_MEMORY_MB, services.config.JOB_CONCURRENCY + 1);
  const renderer = pageRenderer(renderProcesses, services.config);
  services.jobs.define(convertJobName, convertJobHandler(services, renderer));
  // previews in a slot of their own: a burst of uploads never holds the conversions' slots (docs/conversion.md)
  services.jobs.define(thumbnailJobName, thumbnailJobHandler(services, renderer), { ownSlot: true });
  // merges are rarer: one merge process kept warm, under the render bound
  const mergeProcesses = mergePool(services.config.CONV_RENDER_MEMORY_MB, 1);
  services.jobs.define(mergeJobName, mergeJobHandler(services, pdfMerger(mergeProcesses, services.config)));
  // likewise the extraction processes, which read every text (docs/search.md)
  const extractionProcesses = extractionPool(services.config.FULLTEXT_EXTRACT_MEMORY_MB, services.config.JOB_CONCURRENCY);
  const extractor = textExtractor(extractionProcesses, services.config.FULLTEXT_EXTRACT_TIMEOUT_MS);
  services.jobs.define(extractTextJobName, extractTextJobHandler(services, extractor));
  services.jobs.define(reindexJobName, reindexJobHandler(services, extractor));
  services.jobs.define(deepCheckJobName, deepCheckJobHandler(services), { ownSlot: true });
  // a process that takes no jobs leaves the sweep to those that do
  const sweepers = services.config.JOB_CONCURRENCY > 0 ? [startExtractionSweeper(services), startJobSweeper(services), startThumbnailSweeper(services), startWebhookDeliveries(services)] : [];
  return [
    startUploadSweeper(services),
    startUnreferencedFileSweeper(services),
    startAuditRetention(services),
    ...sweepers,
    { name: 'render processes', stop: async () => renderProcesses.close() },
    { name: 'merge processes', stop: async () => mergeProcesses.close() },
    { name: 'extraction processes', stop: async () => extractionProcesses.close() },
  ];
}

/** At the start and every FULLTEXT_SWEEP_MS, an extraction job for the texts whose wake-up call was lost (submitLostExtractions). */
function startExtractionSweeper(services: Services): BackgroundJob {
  const everyMs = services.config.FULLTEXT_SWEEP_MS;
  return startPeriodic(services.logger, 'text-extraction-sweeper', everyMs, () => submitLostExtractions(services), Math.min(everyMs, 1_000));
}

/** Every JOB_SWEEP_MS, a queue job for each kind whose records have waited pending as long (JobQueue.requeueWaiting). */
function startJobSweeper(services: Services): BackgroundJob {
  const everyMs = services.config.JOB_SWEEP_MS;
  return startPeriodic(services.logger, 'job-sweeper', everyMs, async () => {
    const kinds = await services.jobs.requeueWaiting(everyMs);
    if (kinds.length > 0) services.logger.info({ kinds }, 'queued a job for kinds whose records waited pending');
  });
}

/** Every JOB_SWEEP_MS, the thumbnail jobs of the last hour's versions whose request was lost (submitLostThumbnails). */
function startThumbnailSweeper(services: Services): BackgroundJob {
  return startPeriodic(services.logger, 'thumbnail-sweeper', services.config.JOB_SWEEP_MS, async () => {
    await submitLostThumbnails(services);
  });
}

/**
 * Every WEBHOOK_POLL_MS, the webhook deliveries due (src/modules/webhooks/delivery.ts): rounds of
 * WEBHOOK_CONCURRENCY at once while rounds come back full (a backlog), at most 20 before the next pause.
 */
function startWebhookDeliveries(services: Services): BackgroundJob {
  return startPeriodic(services.logger, 'webhook-deliveries', services.config.WEBHOOK_POLL_MS, async () => {
    for (let round = 0; round < 20 && (await deliverDue(services)) === services.config.WEBHOOK_CONCURRENCY; round++);
  });
}
