/**
 * Prompt collection of the buffers of large uploads.
 *
 * Every chunk a socket delivers is a fresh buffer outside the V8 heap, and V8 collects such buffers
 * only when its external-memory heuristic fires (about 64 MB more than after the last collection):
 * the first 1 GiB upload after a start grew the resident set by ~90 MiB, most of it received chunks
 * already written. A young-generation collection (≈ 0.3 ms: little survives) after every
 * PACE_BYTES received across all uploads returns them early.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

const PACE_BYTES = 8 * 1024 * 1024;

type CollectGarbage = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;

let collect: CollectGarbage | null | undefined;
let sinceLastCollection = 0;

/** V8's `gc` function: the one `--expose-gc` gave, or one exposed now. null where the runtime refuses. */
function collector(): CollectGarbage | null {
  if (collect !== undefined) return collect;
  const exposed = (globalThis as { gc?: CollectGarbage }).gc;
  if (exposed) return (collect = exposed);
  try {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as CollectGarbage;
  } catch {
    collect = null;
  }
  return collect;
}

/** Counts bytes received into the store; every PACE_BYTES, one young-generation collection. */
export function noteReceivedBytes(bytes: number): void {
  sinceLastCollection += bytes;
  if (sinceLastCollection < PACE_BYTES) return;
  sinceLastCollection = 0;
  collector()?.({ type: 'minor', execution: 'sync' });
}
