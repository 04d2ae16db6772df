import type { InputKind } from './page-renderer.js';

/** One input of a MERGE, as the merge job hands it to the merger. */
export interface MergeInput {
  path: string;
  fileName: string;
  kind: InputKind;
}

/** One MERGE: its inputs in order, the PDF to write, and the largest input image read (pixels). */
export interface MergeRequest {
  inputs: MergeInput[];
  outputPath: string;
  maxPixels: number;
}

/**
 * Merges PDFs and images into one PDF outside the service's process, within bounds of memory and time
 * (the workers implement it with a bounded merge process, workers/merge/merge-process.ts): `merged`
 * is told each input's page count as it is added; `signal` (the job's cancellation) stops it.
 * Answers the page count of the result.
 */
export interface PdfMerger {
  merge(request: MergeRequest, merged: (index: number, pages: number) => Promise<void>, signal?: AbortSignal): Promise<number>;
}
