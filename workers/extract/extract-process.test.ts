import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/processes.js';
import { scannedPage } from '../../test/helpers/scans.js';
import type { ChildPool } from '../child/bounded-child.js';
import { extractionPool, textExtractor } from './extract-process.js';

let dir: string;
let pool: ChildPool;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-extract-process-'));
  pool = extractionPool(1024, 1);
});
afterAll(async () => {
  pool.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the text extractor of the extraction jobs', () => {
  it('reads every kind of text in an extraction process, never in the service', async () => {
    const extractor = textExtractor(pool, 60_000);
    const read = async (fileName: string, kind: 'html' | 'plain', bytes: string) => {
      const inputPath = path.join(dir, fileName);
      await fs.writeFile(inputPath, bytes);
      return (await extractor.extract({ inputPath, fileName, kind, maxChars: 1_000, ocr: null }))?.text.replace(/\s+/g, ' ').trim();
    };
    expect([await read('page.html', 'html', '<p>pageword &amp; <!-- hidden --></p>'), await read('plain.txt', 'plain', 'plainword')]).toEqual(['pageword &', 'plainword']);
    // the one process of the pool read both, and waits for the next
    expect(pool.waitingPids).toHaveLength(1);
    expect(pool.waitingPids[0]).not.toBe(process.pid);
  });
});

describe('what a reader sees of a PDF besides its text layer', () => {
  it("reads form fields' values and choices, notes' contents and link targets, not check box states", async () => {
    const { PDFDocument, PDFName, PDFString } = await import('pdf-lib');
    const document = await PDFDocument.create();
    const page = document.addPage([400, 400]);
    const form = document.getForm();
    const field = form.createTextField('applicant');
    field.setText('Ermintrude Fieldvalue');
    field.addToPage(page, { x: 20, y: 300, width: 200, height: 20 });
    const choice = form.createDropdown('colour');
    choice.addOptions(['Vermilionchoice', 'Cobaltchoice']);
    choice.addToPage(page, { x: 20, y: 250, width: 200, height: 20 });
    form.createCheckBox('agreed').addToPage(page, { x: 20, y: 200, width: 10, height: 10 });
    const note = document.context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [20, 100, 40, 120], Contents: PDFString.of('Stickynote remark') });
    const link = document.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [20, 50, 200, 70], A: { S: 'URI', URI: PDFString.of('http://www.linktarget.example/page') } });
    page.node.set(PDFName.of('Annots'), document.context.obj([...page.node.Annots()!.asArray(), document.context.register(note), document.context.register(link)]));
    const inputPath = path.join(dir, 'form.pdf');
    await fs.writeFile(inputPath, await document.save());
    const read = await textExtractor(pool, 60_000).extract({ inputPath, fileName: 'form.pdf', kind: 'pdf', maxChars: 10_000, ocr: null });
    for (const words of ['Ermintrude Fieldvalue', 'Vermilionchoice', 'Cobaltchoice', 'Stickynote remark', 'http://www.linktarget.example/page http www linktarget example page']) expect(read?.text).toContain(words);
    expect(read?.text).not.toMatch(/\bOff\b/);
  });
});

describe("OCR's models folder in the OS temp folder", () => {
  it('lives while a recognizer loads the models: none is left once it read an image, nor after the pool closed; one of a process killed while loading goes at the next load', async () => {
    const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-extract-temp-'));
    const previous = process.env.TMPDIR;
    // the extraction processes of this pool (forked with this environment) make their folders here
    process.env.TMPDIR = temp;
    const ocrPool = extractionPool(1024, 1);
    try {
      // as named by a process of this pid namespace that ended while loading (src/temp-folders.ts)
      const namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))![1];
      const orphan = path.join(temp, `crs-ocr-models-${namespace}-${spawnSync(process.execPath, ['-e', '']).pid}-AbC123`);
      await fs.mkdir(orphan);
      const inputPath = path.join(dir, 'receipt.png');
      await fs.writeFile(inputPath, await scannedPage(['Receipt stamped by Marmaduke Hardware']));
      const read = await textExtractor(ocrPool, 60_000).extract({
        inputPath,
        fileName: 'receipt.png',
        kind: 'image',
        maxChars: 1_000,
        ocr: { languages: ['eng'], pageTimeoutMs: 30_000, dpi: 150, stopBy: Date.now() + 55_000 },
      });
      expect(read?.text).toContain('Marmaduke');
      expect(ocrPool.waitingPids).toHaveLength(1);
      expect(await fs.readdir(temp)).toEqual([]);
      const [child] = ocrPool.waitingPids;
      ocrPool.close();
      while (isProcessAlive(child!)) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await fs.readdir(temp)).toEqual([]);
    } finally {
      ocrPool.close();
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      await fs.rm(temp, { recursive: true, force: true });
    }
  }, 90_000);
});
