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
  /** the largest image read (an input image, an image inside a PDF), in pixels */
  maxPixels: number;
  /** the largest raster of a PDF page, in pixels: a larger page is drawn at the resolution that fits (`maxPagePixels`) */
  maxPagePixels: number;
  outputDir: string;
}

/**
 * After the prescan: render (placeholders in place of the pages named; the pages in `skip` are not
 * rendered: the job has them stored already) or stop.
 */
export type DecisionMessage = { type: 'render'; placeholders: { page: number; text: string }[]; skip: number[] } | { type: 'stop' };

export type ChildMessage =
  | ReadyMessage
  /** a PDF opened: its page count, before any page is parsed (the parent may stop the job on it) */
  | { type: 'opened'; pages: number }
  /** countMs: the time the prescan took (loading the document not included) */
  | { type: 'inspected'; pages: number; objects: number[]; countMs: number }
  | { type: 'page'; page: number; path: string; width: number; height: number; placeholder: boolean }
  | { type: 'done' }
  | { type: 'failed'; reasonCode: string; message: string };

/**
 * Bytes of the render process's memory one pixel of a page raster takes: its canvas and the copy
 * sharp encodes (4 bytes each), and copies of earlier pages the allocator has not given back yet.
 * Measured (docs/conversion.md): 20 pages of 33.5 Mpx stayed under 770 MB; 100-Mpx pages needed
 * 880 MB for one and 1.65 GB for three.
 */
const bytesPerPagePixel = 32;

/** The largest page raster a render process bounded to `memoryMb` draws: CONV_MAX_IMAGE_PIXELS, or less when the bound is smaller. */
export const maxPagePixels = (maxPixels: number, memoryMb: number) => Math.min(maxPixels, Math.floor((memoryMb * 1024 * 1024) / bytesPerPagePixel));
