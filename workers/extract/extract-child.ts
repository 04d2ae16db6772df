/**
 * An extraction process: a resource's file in, its text out as the index keeps it (`storableText`), one
 * resource at a time — plain text, HTML and XML (htmlparser2's tokenizer), PDF (pdfjs-dist), DOCX
 * (mammoth). It runs apart from the service with a V8 heap limit, and its parent kills it on its
 * resident size and deadline (workers/child/bounded-child.ts), so a hostile file costs this process
 * only and the service's event loop never reads a text. It may serve several resources one after the
 * other (a warm pool, workers/extract/extract-process.ts): nothing of one file is kept for the next.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mammoth from 'mammoth';
import { plainOrMarkupText, storableText } from '../../src/text/extract.js';
import type { FinalMessage, ReadyMessage } from '../child/bounded-child.js';
import { parentMessages } from '../child/inbox.js';
import type { ExtractMessage, ExtractStart } from './protocol.js';

const require = createRequire(import.meta.url);
const pdfjsRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));

const send = (message: ExtractMessage | FinalMessage | ReadyMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

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
  const loading = pdfjs.getDocument({
    data: new Uint8Array(await readFile(start.inputPath)),
    standardFontDataUrl: `${path.join(pdfjsRoot, 'standard_fonts')}/`,
    cMapUrl: `${path.join(pdfjsRoot, 'cmaps')}/`,
    wasmUrl: `${path.join(pdfjsRoot, 'wasm')}/`,
    verbosity: 0,
  });
  try {
    const document = await loading.promise;
    for (let page = 1; page <= document.numPages && !collector.full; page++) {
      const pdfPage = await document.getPage(page);
      const content = await pdfPage.getTextContent();
      for (const item of content.items) if ('str' in item) collector.add(item.hasEOL ? `${item.str}\n` : `${item.str} `);
      collector.add('\n');
      pdfPage.cleanup();
    }
  } finally {
    // the process may serve the next resource: the document's objects, fonts and caches go now
    await loading.destroy();
  }
}

async function docxText(start: ExtractStart, collector: TextCollector): Promise<void> {
  const { value } = await mammoth.extractRawText({ path: start.inputPath });
  collector.add(value);
}

async function textOf(start: ExtractStart): Promise<{ text: string; truncated: boolean }> {
  if (start.kind === 'plain' || start.kind === 'html' || start.kind === 'xml') return plainOrMarkupText(start.inputPath, start.kind, start.maxChars);
  const collector = new TextCollector(start.maxChars);
  await (start.kind === 'pdf' ? pdfText(start, collector) : docxText(start, collector));
  return { text: collector.text(), truncated: collector.truncated };
}

async function extract(start: ExtractStart): Promise<void> {
  try {
    const { text, truncated } = await textOf(start);
    await send({ type: 'text', text: storableText(text), truncated });
    await send({ type: 'done' });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await send({ type: 'failed', reasonCode: 'illegalArguments', message: `the text of ${start.fileName} cannot be read as ${start.kind === 'plain' ? 'text' : start.kind.toUpperCase()} (${reason})` });
  }
}

const nextMessage = parentMessages();

// the parent died (or let this process go): nothing is waiting for texts any more
process.once('disconnect', () => process.exit(0));
await send({ type: 'ready' });
for (;;) await extract(await nextMessage<ExtractStart>());
