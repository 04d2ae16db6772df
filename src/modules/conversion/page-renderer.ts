import type { TargetFormat } from './operations.js';

/** What a conversion reads: a PDF, or an image (PNG, JPEG, WebP, TIFF, GIF). */
export type InputKind = 'pdf' | 'image';

/** One conversion's rendering, as the convert job asks for it. */
export interface RenderRequest {
  inputPath: string;
  fileName: string;
  kind: InputKind;
  format: TargetFormat;
  dpi: number;
  /** the largest image read (an input image, an image inside a PDF), in pixels */
  maxPixels: number;
  /** the largest raster of a PDF page, in pixels: a larger page is drawn at the resolution that fits (`PageRenderer.maxPagePixels`) */
  maxPagePixels: number;
  outputDir: string;
  /** the first page only, neither counted nor rendered past it (a preview) */
  firstPageOnly?: boolean;
  /** the longest side of a result, in pixels: a larger page or image is scaled down to fit (a preview) */
  maxSide?: number;
}

/**
 * After the prescan: render (placeholders in place of the pages named; the pages in `skip` are not
 * rendered: the job has them stored already) or stop.
 */
export type RenderDecision = { type: 'render'; placeholders: { page: number; text: string }[]; skip: number[] } | { type: 'stop' };

/** A page drawn, as a file in the request's `outputDir` (a placeholder when it could not be drawn, or was not to be). */
export interface RenderedPage {
  page: number;
  path: string;
  width: number;
  height: number;
  placeholder: boolean;
}

export interface RenderCallbacks {
  /** a PDF opened, before its pages are parsed: a page count over the limits fails the job here (it throws) */
  opened?(pages: number): Promise<void>;
  /** after the prescan: what to render (or stop); countMs is the time the prescan took */
  inspected(pages: number, objects: number[], countMs: number): Promise<RenderDecision>;
  page(page: RenderedPage): Promise<void>;
}

/**
 * Draws pages outside the service's process, within bounds of memory and time (the workers implement
 * it with bounded render processes, workers/render/render-process.ts); `signal` (the job's
 * cancellation) stops it.
 */
export interface PageRenderer {
  /** the largest page raster it draws: CONV_MAX_IMAGE_PIXELS, or less when its memory bound is smaller */
  readonly maxPagePixels: number;
  render(request: RenderRequest, callbacks: RenderCallbacks, signal?: AbortSignal): Promise<void>;
}
