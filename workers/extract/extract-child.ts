/**
 * An extraction process: a resource's file in, its text out as the index keeps it (`storableText`), one
 * resource at a time — plain text, HTML and XML (htmlparser2's tokenizer), PDF (pdfjs-dist), DOCX
 * (mammoth), and by OCR (tesseract.js, ./ocr.ts) images and the PDF pages without a text layer. It runs apart from the service with a V8 heap limit, and its parent kills it on its
 * resident size and deadline (workers/child/bounded-child.ts), so a hostile file costs this process
 * only and the service's event loop never reads a text. It may serve several resources one after the
 * other (a warm pool, workers/extract/extract-process.ts): nothing of one file is kept for the next.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Canvas, createCanvas } from '@napi-rs/canvas';
import mammoth from 'mammoth';
import sharp from 'sharp';
import type { ExtractedText, OcrSettings } from '../../src/modules/fulltext/index.js';
import { plainOrMarkupText, storableText } from '../../src/text/extract.js';
import type { FinalMessage, ReadyMessage } from '../child/bounded-child.js';
import { openPdf } from '../child/decrypt-pdf.js';
import { parentMessages } from '../child/inbox.js';
import { recognizeText } from './ocr.js';
import type { ExtractMessage, ExtractStart } from './protocol.js';

const require = createRequire(import.meta.url);
const pdfjsRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));

const send = (message: ExtractMessage | FinalMessage | ReadyMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

/** Collects text up to `maxChars`; `full` says when no more is wanted. */
class TextCollector {
  private readonly parts: string[] = [];
  private length = 0;
  truncated = false;
  /** what was left out and why */
  readonly notes: string[] = [];
  constructor(private readonly maxChars: number) {}
  get full(): boolean {
    return this.length >= this.maxChars;
  }
  add(text: string): void {
    if (this.full) {
      if (text.length > 0) this.truncated = true;
      return;
    }
    const kept = text.slice(0, this.maxChars - this.length);
    if (kept.length < text.length) this.truncated = true;
    this.parts.push(kept);
    this.length += kept.length;
  }
  text(): string {
    return this.parts.join('');
  }
}

async function pdfText(start: ExtractStart, collector: TextCollector): Promise<void> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  pdfjs.GlobalWorkerOptions.workerSrc = pathToFileURL(path.join(pdfjsRoot, 'legacy', 'build', 'pdf.worker.mjs')).href;
  const { task, document } = await openPdf(await readFile(start.inputPath), (data) =>
    pdfjs.getDocument({
      data,
      standardFontDataUrl: `${path.join(pdfjsRoot, 'standard_fonts')}/`,
      cMapUrl: `${path.join(pdfjsRoot, 'cmaps')}/`,
      wasmUrl: `${path.join(pdfjsRoot, 'wasm')}/`,
      // an image inside a page is drawn for OCR only up to this size (a bomb is left out, not decoded)
      maxImageSize: maxOcrPixels,
      verbosity: 0,
    }),
  );
  try {
    for (let page = 1; page <= document.numPages && !collector.full; page++) {
      const pdfPage = await document.getPage(page);
      try {
        const content = await pdfPage.getTextContent();
        // joined as pdf.js's own find does: its items carry the spaces the page shows (a gap wide enough
        // between glyphs); a space after each item split words drawn glyph by glyph ("G r a d u a t e s")
        const layer = content.items.map((item) => ('str' in item ? (item.hasEOL ? `${item.str}\n` : item.str) : '')).join('');
        const text = `${layer}${annotationText(await pdfPage.getAnnotations({ intent: 'display' }))}`;
        // a page without a text layer (a scan) is read by OCR
        if (/\S/.test(text) || !start.ocr) collector.add(text);
        else if (Date.now() < start.ocr.stopBy) await ocrPage(pdfPage, page, start.ocr, collector);
        else collector.notes.push(`page ${page}: not read by OCR, the extraction's deadline (FULLTEXT_EXTRACT_TIMEOUT_MS) was near`);
        collector.add('\n');
      } finally {
        pdfPage.cleanup();
      }
    }
  } finally {
    // the process may serve the next resource: the document's objects, fonts and caches go now
    await task.destroy();
  }
}

/**
 * What a reader sees in a page's annotations besides its text layer: notes and free text
 * (`contents`), form fields' values and their choices, alternative texts, and link targets.
 */
function annotationText(annotations: Record<string, unknown>[]): string {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.trim() !== '') texts.push(value);
    else if (Array.isArray(value)) value.forEach(add);
  };
  for (const annotation of annotations) {
    add((annotation.contentsObj as { str?: string } | undefined)?.str);
    add(annotation.textContent);
    // a check box's or radio button's value is its state (`Off`, `Yes`), not words on the page
    if (!annotation.checkBox && !annotation.radioButton) add(annotation.fieldValue);
    add(annotation.alternativeText);
    add((annotation.options as { displayValue?: string }[] | undefined)?.map((option) => option.displayValue));
    add(annotation.url);
  }
  return texts.length > 0 ? `\n${texts.join('\n')}\n` : '';
}

/** The largest raster OCR reads: an A4 page at 300 dpi is 8.7 Mpx; more only costs time and memory. */
const maxOcrPixels = 16_000_000;

type PdfPage = Awaited<ReturnType<Awaited<ReturnType<typeof import('pdfjs-dist/legacy/build/pdf.mjs').getDocument>['promise']>['getPage']>>;

/** The canvas of the last page drawn for OCR: pages of a scan are mostly of one size, and a canvas's pixels are native memory the collector frees late. */
let surface: Canvas | undefined;

/** Draws a PDF page at the OCR resolution (less when that would pass maxOcrPixels) and reads its text. */
async function ocrPage(page: PdfPage, number: number, ocr: OcrSettings, collector: TextCollector): Promise<void> {
  let viewport = page.getViewport({ scale: ocr.dpi / 72 });
  const fit = Math.sqrt(maxOcrPixels / (viewport.width * viewport.height));
  if (fit < 1) viewport = page.getViewport({ scale: (ocr.dpi / 72) * fit });
  const width = Math.max(1, Math.floor(viewport.width));
  const height = Math.max(1, Math.floor(viewport.height));
  if (surface?.width !== width || surface.height !== height) surface = createCanvas(width, height);
  const canvas = surface;
  await page.render({ canvas: canvas as unknown as HTMLCanvasElement, viewport, background: '#ffffff' }).promise;
  const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
  const image = await sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), { raw: { width, height, channels: 4 } })
    .grayscale()
    .png({ compressionLevel: 1 })
    .toBuffer();
  const text = await recognizeText(image, ocr);
  if (text === undefined) collector.notes.push(`page ${number}: OCR took longer than ${ocr.pageTimeoutMs} ms (OCR_PAGE_TIMEOUT_MS) and was skipped`);
  else collector.add(text);
}

/** An image's text by OCR; the image is decoded by sharp first (within maxOcrPixels), so tesseract reads one plain grey PNG. */
async function imageText(start: ExtractStart, ocr: OcrSettings, collector: TextCollector): Promise<void> {
  const image = await sharp(start.inputPath, { limitInputPixels: maxOcrPixels, animated: false }).grayscale().png({ compressionLevel: 1 }).toBuffer();
  const text = await recognizeText(image, ocr);
  if (text === undefined) collector.notes.push(`OCR took longer than ${ocr.pageTimeoutMs} ms (OCR_PAGE_TIMEOUT_MS) and was skipped`);
  else collector.add(text);
}

async function docxText(start: ExtractStart, collector: TextCollector): Promise<void> {
  const { value } = await mammoth.extractRawText({ path: start.inputPath });
  collector.add(value);
}

async function textOf(start: ExtractStart): Promise<ExtractedText> {
  if (start.kind === 'plain' || start.kind === 'html' || start.kind === 'xml') return { ...(await plainOrMarkupText(start.inputPath, start.kind, start.maxChars)), notes: [] };
  const collector = new TextCollector(start.maxChars);
  if (start.kind === 'pdf') await pdfText(start, collector);
  else if (start.kind === 'image') await imageText(start, start.ocr!, collector);
  else await docxText(start, collector);
  return { text: collector.text(), truncated: collector.truncated, notes: collector.notes };
}

async function extract(start: ExtractStart): Promise<void> {
  try {
    const { text, truncated, notes } = await textOf(start);
    await send({ type: 'text', text: storableText(text), truncated, notes });
    await send({ type: 'done' });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await send({ type: 'failed', reasonCode: 'illegalArguments', message: `the text of ${start.fileName} cannot be read as ${readAs[start.kind]} (${reason})` });
  }
}

const readAs: Record<ExtractStart['kind'], string> = { plain: 'text', html: 'HTML', xml: 'XML', pdf: 'PDF', docx: 'DOCX', image: 'an image' };

const nextMessage = parentMessages();

// the parent died (or let this process go): nothing is waiting for texts any more
process.once('disconnect', () => process.exit(0));
await send({ type: 'ready' });
for (;;) await extract(await nextMessage<ExtractStart>());
