/** Messages between a conversion job and its render process (workers/render/render-child.ts). */
import type { ReadyMessage } from '../child/bounded-child.js';

export type TargetFormat = 'png' | 'jpeg' | 'webp' | 'tiff';
export type InputKind = 'pdf' | 'image';

export interface StartMessage {
  type: 'start';
  inputPath: string;
  fileName: string;
  kind: InputKind;
  format: TargetFormat;
  dpi: number;
  /** the largest image read or rendered page, in pixels (a larger page is rendered at a lower resolution) */
  maxPixels: number;
  outputDir: string;
}

/**
 * After the prescan: render (placeholders in place of the pages named; the pages in `skip` are not
 * rendered: the job has them stored already) or stop.
 */
export type DecisionMessage = { type: 'render'; placeholders: { page: number; text: string }[]; skip: number[] } | { type: 'stop' };

export type ChildMessage =
  | ReadyMessage
  /** countMs: the time the prescan took (loading the document not included) */
  | { type: 'inspected'; pages: number; objects: number[]; countMs: number }
  | { type: 'page'; page: number; path: string; width: number; height: number; placeholder: boolean }
  | { type: 'done' }
  | { type: 'failed'; reasonCode: string; message: string };
