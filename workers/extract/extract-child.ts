/**
 * An extraction process: the text of one PDF (pdfjs-dist) or DOCX (mammoth) in, one message out. It runs
 * apart from the service with a V8 heap limit, and its parent kills it on its resident size and deadline
 * (workers/child/bounded-child.ts), so a hostile document costs this process only.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mammoth from 'mammoth';
import type { FinalMessage } from '../child/bounded-child.js';
import type { ExtractMessage, ExtractStart } from './protocol.js';

const require = createRequire(import.meta.url);
const pdfjsRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));

const send = (message: ExtractMessage | FinalMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

/** Collects text up to `maxChars`; `full` says when no more is wanted. */
class TextCollector {
  private readonly parts: string[] = [];
  private length = 0;
  truncated = false;
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
  const document = await pdfjs.getDocument({
    data: new Uint8Array(await readFile(start.inputPath)),
    standardFontDataUrl: `${path.join(pdfjsRoot, 'standard_fonts')}/`,
    cMapUrl: `${path.join(pdfjsRoot, 'cmaps')}/`,
    wasmUrl: `${path.join(pdfjsRoot, 'wasm')}/`,
    verbosity: 0,
  }).promise;
  for (let page = 1; page <= document.numPages && !collector.full; page++) {
    const pdfPage = await document.getPage(page);
    const content = await pdfPage.getTextContent();
    for (const item of content.items) if ('str' in item) collector.add(item.hasEOL ? `${item.str}\n` : `${item.str} `);
    collector.add('\n');
    pdfPage.cleanup();
  }
  await document.cleanup();
}

async function docxText(start: ExtractStart, collector: TextCollector): Promise<void> {
  const { value } = await mammoth.extractRawText({ path: start.inputPath });
  collector.add(value);
}

process.once('message', (raw) => {
  const start = raw as ExtractStart;
  const collector = new TextCollector(start.maxChars);
  (start.kind === 'pdf' ? pdfText(start, collector) : docxText(start, collector))
    .then(async () => {
      await send({ type: 'text', text: collector.text(), truncated: collector.truncated });
      await send({ type: 'done' });
    })
    .catch(async (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      await send({ type: 'failed', reasonCode: 'illegalArguments', message: `the text of ${start.fileName} cannot be read as ${start.kind.toUpperCase()} (${reason})` });
    })
    .finally(() => process.exit(0));
});
