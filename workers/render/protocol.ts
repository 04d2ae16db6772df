/** Messages between a conversion job and its render process (workers/render/render-child.ts). */
import type { RenderDecision, RenderedPage, RenderRequest } from '../../src/modules/conversion/index.js';
import type { FinalMessage, ReadyMessage } from '../child/bounded-child.js';

export type StartMessage = { type: 'start' } & RenderRequest;

export type DecisionMessage = RenderDecision;

export type ChildMessage =
  | ReadyMessage
  /** a PDF opened: its page count, before any page is parsed (the parent may stop the job on it) */
  | { type: 'opened'; pages: number }
  /** countMs: the time the prescan took (loading the document not included) */
  | { type: 'inspected'; pages: number; objects: number[]; countMs: number }
  | ({ type: 'page' } & RenderedPage)
  | FinalMessage;

/**
 * Bytes of the render process's memory one pixel of a page raster takes: its canvas and the copy
 * sharp encodes (4 bytes each), and copies of earlier pages the allocator has not given back yet.
 * Measured (docs/conversion.md): 20 pages of 33.5 Mpx stayed under 770 MB; 100-Mpx pages needed
 * 880 MB for one and 1.65 GB for three.
 */
const bytesPerPagePixel = 32;

/** The largest page raster a render process bounded to `memoryMb` draws: CONV_MAX_IMAGE_PIXELS, or less when the bound is smaller. */
export const maxPagePixels = (maxPixels: number, memoryMb: number) => Math.min(maxPixels, Math.floor((memoryMb * 1024 * 1024) / bytesPerPagePixel));
