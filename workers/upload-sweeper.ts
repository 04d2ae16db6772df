import type { Services } from '../src/context.js';
import { sweepPendingUploads, uploadLifetimeMs } from '../src/modules/entries/uploads.js';
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
