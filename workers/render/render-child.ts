/**
 * A render process: a conversion's input in, page images out (files in `outputDir`), one conversion at a
 * time. It runs apart from the service with a V8 heap limit, and its parent kills it on its resident
 * size and deadline (workers/render/render-process.ts), so a hostile document costs this process only.
 * It loads its libraries before it says it is ready, and may serve several conversions one after the
 * other (a warm pool, workers/child/bounded-child.ts): nothing of one document is kept for the next.
 *
 * PDFs: pdfjs-dist (its worker code runs in this process) draws on @napi-rs/canvas; the pixels are
 * encoded by sharp. Images: sharp alone, with a pixel limit read from the header before decoding.
 */
import { mkdir, open, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Canvas, createCanvas, GlobalFonts } from '@napi-rs/canvas';
import sharp from 'sharp';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { openPdf } from '../child/decrypt-pdf.js';
import { parentMessages } from '../child/inbox.js';
import type { TargetFormat } from '../../src/modules/conversion/index.js';
import type { ChildMessage, DecisionMessage, StartMessage } from './protocol.js';

type Image = ReturnType<typeof sharp>;

// every input is new (a page's pixels, a file read once): libvips's operation cache would only hold memory
sharp.cache(false);

const require = createRequire(import.meta.url);
const pdfjsRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));
const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
pdfjs.GlobalWorkerOptions.workerSrc = pathToFileURL(path.join(pdfjsRoot, 'legacy', 'build', 'pdf.worker.mjs')).href;
const placeholderFont = 'Placeholder Sans';
GlobalFonts.registerFromPath(path.join(pdfjsRoot, 'standard_fonts', 'LiberationSans-Regular.ttf'), placeholderFont);

const send = (message: ChildMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

class RenderFailure extends Error {
  constructor(
    readonly reasonCode: string,
    message: string,
  ) {
    super(message);
  }
}

const nextMessage = parentMessages();

function encoder(format: TargetFormat, image: Image): Image {
  switch (format) {
    case 'png':
      // pages are mostly flat colour: fast deflate without adaptive filtering keeps files near the
      // default's size at a fraction of the encoding time (the conversion benchmark's mixed PDF); level 2
      // rather than 3: 7–25 % less encoding CPU for files 1–4 % larger (level 1: 20–51 % larger;
      // docs/benchmarks.md, "conversion — fewer statements a job")
      return image.png({ compressionLevel: 2, adaptiveFiltering: false });
    case 'jpeg':
      return image.flatten({ background: '#ffffff' }).jpeg({ quality: 90 });
    case 'webp':
      return image.webp({ quality: 90 });
    case 'tiff':
      return image.tiff({ compression: 'lzw' });
  }
}

/**
 * Encodes `image` into `file`, fsynced: the service moves a page image into its cache store as it is
 * (a rename, no copy), so the file must be durable before the service records it.
 */
async function writeDurably(image: Image, file: string) {
  const info = await image.toFile(file);
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return info;
}

/**
 * The longest side of a result: what the request asks (a preview), and at most 16383 pixels for WebP;
 * a larger page or image is scaled to fit, as for the pixel limit.
 */
const webpMaxSide = 16383;
const maxSide = (start: StartMessage) => Math.min(start.format === 'webp' ? webpMaxSide : Infinity, start.maxSide ?? Infinity);

const outputPath = (start: StartMessage, page: number) => path.join(start.outputDir, `page-${page}.${start.format}`);

/** Whether every pixel of `rgba` has equal red, green and blue (text pages: black text, grey edges, on white). */
function isGrey(rgba: Buffer): boolean {
  const pixels = new Uint32Array(rgba.buffer, rgba.byteOffset, rgba.length >>> 2);
  for (let i = 0; i < pixels.length; i++) {
    const pixel = pixels[i]!;
    // red = green and green = blue, in the low three bytes
    if (((pixel ^ (pixel >>> 8)) & 0xffff) !== 0) return false;
  }
  return true;
}

/**
 * Encodes a page's pixels and reports the page. `canvas.data()` copies the stored pixels out
 * (premultiplied RGBA, which for these opaque pages painted on white equals straight RGBA) without
 * getImageData's unpremultiplying pass, and the copy lets the canvas be drawn on again at once.
 */
async function writeCanvas(start: StartMessage, page: number, canvas: Canvas, placeholder: boolean) {
  const { width, height } = canvas;
  const file = outputPath(start, page);
  const rgba = canvas.data();
  const pixels = sharp(rgba, { raw: { width, height, channels: 4 } });
  // rendered pages are opaque (painted on white): RGB is a quarter less to encode; a page with no
  // colour (most text pages) is one grey channel, the same pixels in a third of the data (half the
  // PNG's bytes and encoding time on the conversion benchmark's text pages, for a scan costing ~2 ms)
  await writeDurably(encoder(start.format, isGrey(rgba) ? pixels.extractChannel(0) : pixels.removeAlpha()), file);
  await send({ type: 'page', page, path: file, width, height, placeholder });
}

/** A white page of the given size with `text` in its middle (REPLACE strategy, pages that failed to render). */
function placeholderCanvas(width: number, height: number, text: string): Canvas {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000000';
  const size = Math.max(10, Math.floor(width / 40));
  context.font = `${size}px "${placeholderFont}"`;
  context.textAlign = 'center';
  const words = text.split(' ');
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.at(-1);
    if (last !== undefined && context.measureText(`${last} ${word}`).width < width * 0.85) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  lines.forEach((line, index) => context.fillText(line, width / 2, height / 2 + (index - lines.length / 2) * size * 1.4));
  return canvas;
}

async function convertImage(start: StartMessage) {
  let metadata: Awaited<ReturnType<Image['metadata']>>;
  try {
    // the header only: the pixel limit is checked below, before anything is decoded
    metadata = await sharp(start.inputPath, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new RenderFailure('illegalArguments', `input resource ${start.fileName} is not a readable image (${(error as Error).message})`);
  }
  const pixels = (metadata.width ?? 0) * (metadata.height ?? 0);
  if (pixels > start.maxPixels) {
    throw new RenderFailure('illegalArguments', `input resource ${start.fileName} has ${metadata.width}×${metadata.height} pixels, more than the limit of ${start.maxPixels}`);
  }
  await send({ type: 'inspected', pages: 1, objects: [], countMs: 0 });
  const decision = await nextMessage<DecisionMessage>();
  if (decision.type === 'stop') return;
  const file = outputPath(start, 1);
  try {
    const side = maxSide(start);
    const image = sharp(start.inputPath, { limitInputPixels: start.maxPixels }).rotate();
    const info = await writeDurably(encoder(start.format, side < Infinity ? image.resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }) : image), file);
    await send({ type: 'page', page: 1, path: file, width: info.width, height: info.height, placeholder: false });
  } catch (error) {
    throw new RenderFailure('illegalArguments', `input resource ${start.fileName} could not be converted (${(error as Error).message})`);
  }
}

/** Painting operations of a page's operator list: filled or stroked paths, text runs, images, shadings, form XObjects. */
function countObjects(OPS: Record<string, number>, fnArray: number[], argsArray: unknown[][]): number {
  const single = new Set([
    OPS.stroke, OPS.closeStroke, OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke, OPS.rawFillPath,
    OPS.showText, OPS.showSpacedText, OPS.nextLineShowText, OPS.nextLineSetSpacingShowText,
    OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject, OPS.paintSolidColorImageMask,
    OPS.shadingFill, OPS.paintFormXObjectBegin,
  ]);
  let count = 0;
  for (let i = 0; i < fnArray.length; i++) {
    const op = fnArray[i]!;
    if (single.has(op)) count++;
    // a path is built and painted in one operation; its first argument is the painting operator (endPath: not painted)
    else if (op === OPS.constructPath) count += argsArray[i]?.[0] === OPS.endPath ? 0 : 1;
    else if (op === OPS.paintImageMaskXObjectGroup || op === OPS.paintInlineImageXObjectGroup) count += (argsArray[i]?.[0] as unknown[] | undefined)?.length ?? 1;
    else if (op === OPS.paintImageXObjectRepeat || op === OPS.paintImageMaskXObjectRepeat) count += Math.max(1, ((argsArray[i]?.at(-1) as unknown[] | undefined)?.length ?? 2) / 2);
  }
  return count;
}

/*
 * pdfjs leaves an image larger than `maxImageSize` out of the page and says so only as a warning,
 * which it writes with console.warn (verbosity WARNINGS). Such a page is a placeholder saying why, not
 * a page silently without its image. The other warnings are dropped, as verbosity ERRORS dropped them.
 */
let imageLeftOut = false;
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].includes('Image exceeded maximum allowed size')) imageLeftOut = true;
};

async function convertPdf(start: StartMessage) {
  let opened;
  try {
    opened = await openPdf(await readFile(start.inputPath), (data) =>
      pdfjs.getDocument({
        data,
        standardFontDataUrl: `${path.join(pdfjsRoot, 'standard_fonts')}/`,
        cMapUrl: `${path.join(pdfjsRoot, 'cmaps')}/`,
        iccUrl: `${path.join(pdfjsRoot, 'iccs')}/`,
        wasmUrl: `${path.join(pdfjsRoot, 'wasm')}/`,
        maxImageSize: start.maxPixels,
        verbosity: pdfjs.VerbosityLevel.WARNINGS,
      }),
    );
  } catch (error) {
    const e = error as Error;
    if (e.name === 'PasswordException') throw new RenderFailure('illegalArguments', `input resource ${start.fileName} is encrypted and cannot be opened without its password`);
    throw new RenderFailure('illegalArguments', `input resource ${start.fileName} is not a readable PDF (${e.message})`);
  }
  try {
    await renderDocument(start, opened.document);
  } finally {
    // the process may serve the next conversion: the document's objects, fonts and caches go now
    await opened.task.destroy();
  }
}

async function renderDocument(start: StartMessage, document: PDFDocumentProxy) {
  const pages = document.numPages;
  if (pages < 1) throw new RenderFailure('illegalArguments', `input resource ${start.fileName} has no pages`);
  await send({ type: 'opened', pages });
  // the pages counted and drawn
  const last = start.firstPageOnly ? 1 : pages;
  const objects: number[] = [];
  const countStarted = performance.now();
  for (let number = 1; number <= last; number++) {
    try {
      const page = await document.getPage(number);
      const list = await page.getOperatorList();
      objects.push(countObjects(pdfjs.OPS as unknown as Record<string, number>, list.fnArray, list.argsArray as unknown[][]));
      page.cleanup();
    } catch {
      objects.push(0); // an unreadable page is rendered as a placeholder below
    }
  }
  await send({ type: 'inspected', pages, objects, countMs: performance.now() - countStarted });
  const decision = await nextMessage<DecisionMessage>();
  if (decision.type === 'stop') return;
  const placeholders = new Map(decision.placeholders.map((p) => [p.page, p.text]));
  const skip = new Set(decision.skip);
  const scale = start.dpi / 72;
  // a page is encoded (sharp, in libuv threads) while the next one renders; one page at a time, in order
  let writing = Promise.resolve();
  // pages of one size are drawn on one canvas (its pixels are copied out for encoding): allocating a
  // page's surface cost more than drawing a text page (profiled on the conversion benchmark)
  let surface: Canvas | undefined;
  for (let number = 1; number <= last; number++) {
    if (skip.has(number)) continue;
    let page;
    let width = Math.round(8.5 * start.dpi);
    let height = Math.round(11 * start.dpi);
    let canvas: Canvas;
    let placeholder = false;
    try {
      page = await document.getPage(number);
      let viewport = page.getViewport({ scale });
      // a huge page is rendered at the resolution that fits the pixel limit (and the format's largest side)
      const side = maxSide(start);
      const fit = Math.min(Math.sqrt(start.maxPagePixels / (viewport.width * viewport.height)), side / viewport.width, side / viewport.height);
      if (fit < 1) viewport = page.getViewport({ scale: scale * fit });
      width = Math.max(1, Math.floor(viewport.width));
      height = Math.max(1, Math.floor(viewport.height));
      const text = placeholders.get(number);
      if (text === undefined) {
        if (surface?.width !== width || surface.height !== height) surface = createCanvas(width, height);
        canvas = surface;
        // a render that failed part-way may leave the context's state changed: the next page gets a fresh canvas
        surface = undefined;
        imageLeftOut = false;
        await page.render({ canvas: canvas as unknown as HTMLCanvasElement, viewport, background: '#ffffff' }).promise;
        surface = canvas;
        if (imageLeftOut) {
          canvas = placeholderCanvas(width, height, `Page ${number} not rendered: it has an image of more than ${start.maxPixels} pixels (CONV_MAX_IMAGE_PIXELS).`);
          placeholder = true;
        }
      } else {
        canvas = placeholderCanvas(width, height, text);
        placeholder = true;
      }
    } catch (error) {
      // a malformed page does not stop the document: it is shown as a placeholder saying why
      canvas = placeholderCanvas(width, height, `Page ${number} could not be rendered: ${(error as Error).message}`);
      placeholder = true;
    } finally {
      page?.cleanup();
    }
    await writing;
    writing = writeCanvas(start, number, canvas, placeholder);
  }
  await writing;
}

async function convert(start: StartMessage) {
  try {
    await mkdir(start.outputDir, { recursive: true });
    if (start.kind === 'pdf') await convertPdf(start);
    else await convertImage(start);
    await send({ type: 'done' });
  } catch (error) {
    const e = error as Error;
    await send({ type: 'failed', reasonCode: e instanceof RenderFailure ? e.reasonCode : 'conversionFailed', message: e.message });
  }
}

// the parent died (or let this process go): nothing is waiting for pages any more
process.once('disconnect', () => process.exit(0));
await send({ type: 'ready' });
for (;;) await convert(await nextMessage<StartMessage>());
