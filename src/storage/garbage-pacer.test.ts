import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { noteReceivedBytes } from './garbage-pacer.js';

/** The young-generation collections observed while `run` executes. */
async function minorCollectionsDuring(run: () => void): Promise<number> {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  run();
  await new Promise((resolve) => setTimeout(resolve, 50)); // gc entries are delivered asynchronously
  observer.disconnect();
  return entries.filter((entry) => (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR).length;
}

describe('noteReceivedBytes', () => {
  it('runs one young-generation collection per 8 MiB received, counted across calls', async () => {
    // 64 MiB in 64 KiB chunks, allocating nothing: only the pacer can trigger collections here
    const collections = await minorCollectionsDuring(() => {
      for (let i = 0; i < 1024; i++) noteReceivedBytes(64 * 1024);
    });
    expect(collections).toBeGreaterThanOrEqual(8);
    expect(collections).toBeLessThanOrEqual(12); // the test runner may add one of its own
  });

});
