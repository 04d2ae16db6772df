import type { Logger } from '../src/logger.js';

export interface BackgroundJob {
  name: string;
  /** stops scheduling and waits for a run in progress */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `everyMs` (the first time after `firstAfterMs`) until stopped; runs never overlap:
 * the next is scheduled when one ends. A failed run is logged and the schedule goes on.
 */
export function startPeriodic(logger: Logger, name: string, everyMs: number, run: () => Promise<void>, firstAfterMs = everyMs): BackgroundJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const once = async () => {
    try {
      await run();
    } catch (error) {
      logger.warn({ err: error }, `${name} failed`);
    }
  };
  const schedule = (afterMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = once().finally(() => schedule(everyMs));
    }, afterMs);
    timer.unref();
  };
  schedule(firstAfterMs);
  return {
    name,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
