import type { Services } from '../src/context.js';
import { sweepPendingUploads } from '../src/modules/entries/uploads.js';

/** An upload id nobody turned into a content within this time is abandoned. */
export const uploadLifetimeMs = 3_600_000;

export interface BackgroundJob {
  name: string;
  stop(): void;
}

/**
 * Removes abandoned uploads (pending resources and their bytes) every `everyMs`: a GraphQL client
 * that staged bytes and never called createContent, or a REST upload cut off by a crash elsewhere.
 */
export function startUploadSweeper(services: Services, everyMs = 600_000): BackgroundJob {
  const timer = setInterval(() => {
    sweepPendingUploads(services.orm.em.fork(), services, uploadLifetimeMs).then(
      (removed) => removed > 0 && services.logger.info({ removed }, 'abandoned uploads removed'),
      (error: unknown) => services.logger.warn({ err: error }, 'upload sweep failed'),
    );
  }, everyMs);
  timer.unref();
  return { name: 'upload-sweeper', stop: () => clearInterval(timer) };
}
