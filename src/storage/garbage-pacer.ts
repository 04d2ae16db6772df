/**
 * Prompt collection of the buffers of large uploads.
 *
 * Every chunk a socket delivers is a fresh buffer outside the V8 heap, and V8 collects such buffers
 * only when its external-memory heuristic fires (about 64 MB more than after the last collection):
 * the first 1 GiB upload after a start grew the resident set by ~90 MiB, most of it received chunks
 * already written. A young-generation collection (≈ 0.3 ms: little survives) after every
 * PACE_BYTES received across all uploads returns them early. It needs `gc`, which `node --expose-gc`
 * gives (the start script, the Dockerfile, the test and benchmark processes); without it nothing is paced.
 */

const PACE_BYTES = 8 * 1024 * 1024;

type CollectGarbage = (options: { type: 'minor'; execution: 'sync' }) => void;

const collect = (globalThis as { gc?: CollectGarbage }).gc;
let sinceLastCollection = 0;

/** Counts bytes received into the store (or from S3 for a download); every PACE_BYTES, one young-generation collection. */
export function noteReceivedBytes(bytes: number): void {
  sinceLastCollection += bytes;
  if (sinceLastCollection < PACE_BYTES) return;
  sinceLastCollection = 0;
  collect?.({ type: 'minor', execution: 'sync' });
}
