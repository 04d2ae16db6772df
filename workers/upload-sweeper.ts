import type { Services } from '../src/context.js';
import { sweepPendingUploads, sweepUnreferencedFiles, uploadLifetimeMs } from '../src/modules/entries/index.js';
import { startPeriodic, type BackgroundJob } from './periodic.js';

/**
 * Removes abandoned uploads every `everyMs`: pending resources with their bytes (a GraphQL client that
 * staged bytes and never called createContent, a REST upload cut off by a crash elsewhere) and temp
 * files older than an upload may live.
 */
export function startUploadSweeper(services: Services, everyMs = 600_000): BackgroundJob {
  return startPeriodic(services.logger, 'upload-sweeper', everyMs, async () => {
    const removed = await sweepPendingUploads(services.orm.em.fork(), services, uploadLifetimeMs);
    const temporary = await services.contentStore.sweepTemporary({ olderThanMs: uploadLifetimeMs });
    if (removed + temporary > 0) services.logger.info({ removed, temporary }, 'abandoned uploads removed');
  });
}

/**
 * Removes, a minute after the start and then every six hours, the stored files no row refers to
 * (bytes a crash left between a deletion's commit and its file removals, or between a REST create's
 * placing of its bytes and its row's commit): it walks both stores.
 */
export function startUnreferencedFileSweeper(services: Services, everyMs = 6 * 3_600_000, firstAfterMs = 60_000): BackgroundJob {
  return startPeriodic(
    services.logger,
    'unreferenced-file-sweeper',
    everyMs,
    async () => {
      const removed = await sweepUnreferencedFiles(services.orm.em.fork(), services, uploadLifetimeMs);
      if (removed.contents + removed.pageImages > 0) services.logger.info(removed, 'stored files no row refers to removed');
    },
    firstAfterMs,
  );
}
