/**
 * A merge process (DESIGN §12, MERGE): PDFs and images in, one PDF out, one merge at a time. It runs
 * apart from the service with a V8 heap limit, and its parent kills it on its resident size and
 * deadline (workers/merge/merge-process.ts), so a hostile input costs this process only.
 *
 * pdf-lib copies the pages of each PDF (one source document in memory at a time) and embeds images
 * (PNG and JPEG as they are; WebP, TIFF and GIF through sharp as PNG), each on an A4 page turned to
 * its orientation and fitted inside a 36 pt margin, never enlarged: scans and photos of any size print
 * alike (docs/conversion.md). A PDF encrypted with an owner password only (an empty user password: any
 * reader opens it) is first written out unencrypted by pdf.js, which pdf-lib cannot do.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { parentMessages } from '../child/inbox.js';
import type { MergeInput } from '../../src/modules/conversion/index.js';
import type { ChildMessage, StartMessage } from './protocol.js';

sharp.cache(false);

const send = (message: ChildMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
const nextMessage = parentMessages();

class MergeFailure extends Error {
  constructor(
    readonly reasonCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** A4 in points, and the margin an image keeps from the page's edges. */
const a4 = { short: 595.28, long: 841.89 };
const margin = 36;

/**
 * An encrypted PDF's pages as an unencrypted PDF, followed by one blank page of ours; a PDF that needs a
 * user password is refused. pdf-lib cannot decrypt (it would copy the encrypted streams unreadable);
 * pdf.js opens a PDF whose user password is empty, as every reader does, and its page extraction
 * (`extractPages`, the one behind its page organiser) writes the pages out. Pages of one document it
 * writes with that document's encryption; pages of two documents without: hence the blank page, which
 * the caller leaves out. pdf.js is loaded only when an encrypted input comes.
 */
async function decrypted(bytes: Uint8Array, fileName: string): Promise<Uint8Array> {
  const require = createRequire(import.meta.url);
  const pdfjsRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  pdfjs.GlobalWorkerOptions.workerSrc = pathToFileURL(path.join(pdfjsRoot, 'legacy', 'build', 'pdf.worker.mjs')).href;
  const loading = pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: pdfjs.VerbosityLevel.ERRORS });
  try {
    const document = await loading.promise.catch((error: Error) => {
      if (error.name === 'PasswordException') throw new MergeFailure('illegalArguments', `input resource ${fileName} is encrypted and cannot be opened without its password`);
      throw new MergeFailure('illegalArguments', `input resource ${fileName} is not a readable PDF (${error.message})`);
    });
    const blank = await PDFDocument.create({ updateMetadata: false });
    blank.addPage([10, 10]);
    const written = await document.extractPages([{ document: null }, { document: await blank.save() }]);
    if (!written) throw new MergeFailure('illegalArguments', `input resource ${fileName} is encrypted and its pages could not be decrypted`);
    return written;
  } finally {
    await loading.destroy();
  }
}

async function addPdf(output: PDFDocument, input: MergeInput): Promise<number> {
  let source: PDFDocument;
  let blankPages = 0;
  const bytes = await readFile(input.path);
  try {
    source = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch (error) {
    // EncryptedPDFError, matched by its words: its class is not exported alike in every build
    if (!/is encrypted/.test((error as Error).message)) throw new MergeFailure('illegalArguments', `input resource ${input.fileName} is not a readable PDF (${(error as Error).message})`);
    source = await PDFDocument.load(await decrypted(bytes, input.fileName), { updateMetadata: false });
    blankPages = 1;
  }
  const pages = await output.copyPages(source, source.getPageIndices().slice(0, source.getPageCount() - blankPages));
  if (pages.length === 0) throw new MergeFailure('illegalArguments', `input resource ${input.fileName} has no pages`);
  for (const page of pages) output.addPage(page);
  return pages.length;
}

async function addImage(output: PDFDocument, input: MergeInput, maxPixels: number): Promise<number> {
  const bytes = await readFile(input.path);
  let embedded;
  try {
    const image = sharp(bytes, { limitInputPixels: maxPixels, animated: false });
    const { format } = await image.metadata();
    embedded = format === 'jpeg' ? await output.embedJpg(bytes) : await output.embedPng(format === 'png' ? bytes : await image.png().toBuffer());
  } catch (error) {
    const message = (error as Error).message;
    if (/pixel limit/i.test(message)) throw new MergeFailure('illegalArguments', `input resource ${input.fileName} has more than ${maxPixels} pixels (CONV_MAX_IMAGE_PIXELS)`);
    throw new MergeFailure('illegalArguments', `input resource ${input.fileName} is not a readable image (${message})`);
  }
  const landscape = embedded.width > embedded.height;
  const [width, height] = landscape ? [a4.long, a4.short] : [a4.short, a4.long];
  const scale = Math.min(1, (width - 2 * margin) / embedded.width, (height - 2 * margin) / embedded.height);
  const drawn = { width: embedded.width * scale, height: embedded.height * scale };
  const page = output.addPage([width, height]);
  page.drawImage(embedded, { x: (width - drawn.width) / 2, y: (height - drawn.height) / 2, ...drawn });
  return 1;
}

async function merge(start: StartMessage) {
  try {
    // no creation date or producer: the same inputs make the same bytes (a retried job finds its own result by its md5)
    const output = await PDFDocument.create({ updateMetadata: false });
    for (const [index, input] of start.inputs.entries()) {
      // what pdf-lib throws past its parser (a document without a page tree: "Cannot read properties of undefined") is the input's failure too
      const pages = await (input.kind === 'pdf' ? addPdf(output, input) : addImage(output, input, start.maxPixels)).catch((error: Error) => {
        throw error instanceof MergeFailure ? error : new MergeFailure('illegalArguments', `input resource ${input.fileName} could not be merged (${error.message})`);
      });
      await send({ type: 'merged', index, pages });
    }
    await writeFile(start.outputPath, await output.save());
    await send({ type: 'written', pages: output.getPageCount() });
    await send({ type: 'done' });
  } catch (error) {
    const e = error as Error;
    await send({ type: 'failed', reasonCode: e instanceof MergeFailure ? e.reasonCode : 'conversionFailed', message: e.message });
  }
}

// the parent died (or let this process go): nothing is waiting for the result any more
process.once('disconnect', () => process.exit(0));
await send({ type: 'ready' });
for (;;) await merge(await nextMessage<StartMessage>());
