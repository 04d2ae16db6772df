/**
 * A merge process (DESIGN §12, MERGE): PDFs and images in, one PDF out, one merge at a time. It runs
 * apart from the service with a V8 heap limit, and its parent kills it on its resident size and
 * deadline (workers/merge/merge-process.ts), so a hostile input costs this process only.
 *
 * pdf-lib copies the pages of each PDF (one source document in memory at a time) and embeds images
 * (PNG and JPEG as they are; WebP, TIFF and GIF through sharp as PNG), each on an A4 page turned to
 * its orientation and fitted inside a 36 pt margin, never enlarged: scans and photos of any size print
 * alike (docs/conversion.md). An encrypted PDF that opens with an empty password (any reader opens it)
 * is first written out unencrypted by qpdf, which pdf-lib cannot do.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { decryptWithEmptyPassword } from '../child/decrypt-pdf.js';
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

async function addPdf(output: PDFDocument, input: MergeInput): Promise<number> {
  let source: PDFDocument;
  const bytes = await readFile(input.path);
  try {
    source = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch (error) {
    // EncryptedPDFError, matched by its words: its class is not exported alike in every build
    if (!/is encrypted/.test((error as Error).message)) throw new MergeFailure('illegalArguments', `input resource ${input.fileName} is not a readable PDF (${(error as Error).message})`);
    // pdf-lib cannot decrypt (it would copy the encrypted streams unreadable)
    const decryption = await decryptWithEmptyPassword(bytes);
    if (!('bytes' in decryption)) throw new MergeFailure('illegalArguments', `input resource ${input.fileName} is encrypted and cannot be opened without its password`);
    source = await PDFDocument.load(decryption.bytes, { updateMetadata: false });
  }
  const pages = await output.copyPages(source, source.getPageIndices());
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
