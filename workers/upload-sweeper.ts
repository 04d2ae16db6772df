import type { Services } from '../src/context.js';
import { sweepPendingUploads, uploadLifetimeMs } from '../src/modules/entries/uploads.js';

export interface BackgroundJob {
  name: string;
  /** stops scheduling and waits for a run in progress */
  stop(): Promise<void>;
}

/**
 * Removes abandoned uploads every `everyMs`: pending resources with their bytes (a GraphQL client that
 * staged bytes and never called createContent, a REST upload cut off by a crash elsewhere) and temp
 * files older than an upload may live. Runs never overlap: the next is scheduled when one ends.
 */
export function startUploadSweeper(services: Services, everyMs = 600_000): BackgroundJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const sweep = async () => {
    try {
      const removed = await sweepPendingUploads(services.orm.em.fork(), services, uploadLifetimeMs);
      const temporary = await services.contentStore.sweepTemporary({ olderThanMs: uploadLifetimeMs });
      if (removed + temporary > 0) services.logger.info({ removed, temporary }, 'abandoned uploads removed');
    } catch (error) {
      services.logger.warn({ err: error }, 'upload sweep failed');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep().finally(schedule);
    }, everyMs);
    timer.unref();
  };
  schedule();
  return {
    name: 'upload-sweeper',
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
