import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { contentUrl, extracted, newContent, sql } from '../../../test/helpers/entries.js';
import { buildPdf, textPage } from '../../../test/helpers/pdf.js';
import { scannedPage, scannedPdf } from '../../../test/helpers/scans.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

// OCR (DESIGN §12): images and PDF pages without a text layer get their text by tesseract.js in the
// extraction process, and are found by by-text and fullText() like any text. OCR takes seconds of CPU a
// page: on a loaded machine a test here may take longer than the suite's 30 s.
const ocrTestMs = 120_000;
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ OCR_ENABLED: 'true', FULLTEXT_SWEEP_MS: '500' });
});
afterAll(() => service?.stop());

const namesByText = async (on: TestService, word: string) => {
  const { status, body } = await call(contentUrl(on, '/content/search/by-text', { searchText: word, limit: 100 }, on.adminSession, on.contentBase));
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.entries as { name: string }[]).map((entry) => entry.name).sort();
};
const namesByCondition = async (condition: string) => {
  const { status, body } = await call(contentUrl(service, '/content/search/by-condition', { condition, limit: 100 }));
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.entries as { name: string }[]).map((entry) => entry.name).sort();
};
const notesOf = async (on: TestService, contentId: string) =>
  (await sql<{ notes: string[] }>(on, 'select t.notes from entry e join resource_text t on t.resource_id = e.resource_id where e.id = ?', [contentId]))[0]?.notes;

describe('OCR', { timeout: ocrTestMs }, () => {
  it('reads a scanned PDF (pages without a text layer): by-text and fullText() find words of every page', async () => {
    const pdf = await scannedPdf([['Quarterly invoice from Zebulon Fabrics', 'Total amount due within thirty days'], ['Second page mentions Quillfeather Logistics']]);
    const scan = await newContent(service, { name: 'scan.pdf', bytes: pdf, mimeType: 'application/pdf' });
    await extracted(service, scan.id);
    expect(await namesByText(service, 'zebulon')).toEqual(['scan.pdf']);
    expect(await namesByText(service, 'quillfeather')).toEqual(['scan.pdf']);
    expect(await namesByCondition("fullText('Fabrics') AND name = 'scan.pdf'")).toEqual(['scan.pdf']);
    expect(await notesOf(service, scan.id)).toEqual([]);
  });

  it('reads PNG, JPEG, TIFF and WebP images', async () => {
    const page = await scannedPage(['Receipt stamped by Marmaduke Hardware']);
    const sharp = (await import('sharp')).default;
    const images = {
      'receipt.png': ['image/png', page],
      'receipt.jpg': ['image/jpeg', await sharp(page).jpeg().toBuffer()],
      'receipt.tiff': ['image/tiff', await sharp(page).tiff().toBuffer()],
      'receipt.webp': ['image/webp', await sharp(page).webp().toBuffer()],
    } as const;
    for (const [name, [mimeType, bytes]] of Object.entries(images)) await extracted(service, (await newContent(service, { name, bytes, mimeType })).id);
    expect(await namesByText(service, 'marmaduke')).toEqual(Object.keys(images).sort());
  });

  it('keeps the text layer of pages that have one and reads the others by OCR', async () => {
    const typed = buildPdf([textPage(['typedpageword on the first page'])]);
    const mixed = await scannedPdf([['Scanned annex signed by Philomena Crabtree']]);
    // one document of a typed page and a scanned page: the scan's page copied after the typed one
    const { PDFDocument } = await import('pdf-lib');
    const document = await PDFDocument.load(typed);
    const annex = await PDFDocument.load(mixed);
    for (const copied of await document.copyPages(annex, [0])) document.addPage(copied);
    const both = await newContent(service, { name: 'mixed.pdf', bytes: Buffer.from(await document.save()), mimeType: 'application/pdf' });
    await extracted(service, both.id);
    expect(await namesByText(service, 'typedpageword')).toEqual(['mixed.pdf']);
    expect(await namesByText(service, 'philomena')).toEqual(['mixed.pdf']);
  });
});

describe('OCR bounds and settings', { timeout: ocrTestMs }, () => {
  it('skips a page over OCR_PAGE_TIMEOUT_MS, says so in the notes of its text, and the queue goes on', async () => {
    const hurried = await startTestService({ OCR_ENABLED: 'true', OCR_PAGE_TIMEOUT_MS: '100', FULLTEXT_SWEEP_MS: '500' });
    try {
      const slow = await newContent(hurried, { name: 'slow-scan.pdf', bytes: await scannedPdf([['Words nobody has time for']], 300), mimeType: 'application/pdf', session: hurried.adminSession, base: hurried.contentBase });
      await extracted(hurried, slow.id);
      expect(await notesOf(hurried, slow.id)).toEqual(['page 1: OCR took longer than 100 ms (OCR_PAGE_TIMEOUT_MS) and was skipped']);
      const after = await newContent(hurried, { name: 'after.txt', bytes: 'afterword', mimeType: 'text/plain', session: hurried.adminSession, base: hurried.contentBase });
      await extracted(hurried, after.id);
      expect(await namesByText(hurried, 'afterword')).toEqual(['after.txt']);
    } finally {
      await hurried.stop();
    }
  });

  it('reads no image with OCR_ENABLED=false, and says why', async () => {
    const off = await startTestService({ OCR_ENABLED: 'false', FULLTEXT_SWEEP_MS: '500' });
    try {
      const image = await newContent(off, { name: 'unread.png', bytes: await scannedPage(['Barnabus Wigglesworth']), mimeType: 'image/png', session: off.adminSession, base: off.contentBase });
      await extracted(off, image.id);
      expect(await namesByText(off, 'wigglesworth')).toEqual([]);
      expect(await notesOf(off, image.id)).toEqual(['OCR_ENABLED is false: no text is read from images']);
    } finally {
      await off.stop();
    }
  });

  it('refuses at start a language whose model is not installed', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x@localhost/x', OCR_LANGUAGES: 'eng+xyz' })).toThrow(/OCR_LANGUAGES.*@tesseract\.js-data/s);
    expect(loadConfig({ DATABASE_URL: 'postgres://x@localhost/x', OCR_LANGUAGES: 'eng' }).OCR_LANGUAGES).toEqual(['eng']);
  });
});
