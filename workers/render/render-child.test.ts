import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf, objectsPage, type PageSpec, textPage } from '../../test/helpers/pdf.js';
import { renderInChild } from './render-process.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-render-child-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

/** Renders `pdf` at 72 DPI and returns each page's decoded RGB pixels, in the order the pages were reported. */
async function renderPages(name: string, pdf: Buffer): Promise<{ page: number; pixels: Buffer }[]> {
  const inputPath = path.join(dir, `${name}.pdf`);
  await fs.writeFile(inputPath, pdf);
  const pages: { page: number; pixels: Buffer }[] = [];
  await renderInChild(
    { type: 'start', inputPath, fileName: `${name}.pdf`, kind: 'pdf', format: 'png', dpi: 72, maxPixels: 10_000_000, outputDir: path.join(dir, name) },
    { memoryMb: 1024, timeoutMs: 60_000 },
    {
      inspected: async () => ({ type: 'render', placeholders: [] }),
      page: async (page) => {
        pages.push({ page: page.page, pixels: await sharp(page.path).removeAlpha().raw().toBuffer() });
      },
    },
  );
  return pages;
}

const gradient = (width: number, height: number, shift: number) => {
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 7 + shift) & 255;
  return { width, height, rgb };
};

describe('the render process', () => {
  it('renders each page of a document as it renders that page alone (one canvas drawn on page after page, encoding overlapping the next render)', async () => {
    const specs: PageSpec[] = [
      { content: 'q 400 0 0 300 100 400 cm /Im1 Do Q', image: gradient(80, 60, 0) },
      textPage(['only a line of text']),
      objectsPage(30),
      { content: 'q 200 0 0 150 50 50 cm /Im1 Do Q', image: gradient(40, 30, 99) },
      { content: '0.2 0.4 0.8 rg 100 100 200 200 re f' },
    ];
    const together = await renderPages('together', buildPdf(specs));
    expect(together.map((p) => p.page)).toEqual([1, 2, 3, 4, 5]);
    // page 5 (612 × 792 pixels at 72 DPI): its rectangle in RGB order, the page around it white
    const pixel = (x: number, y: number) => [...together[4]!.pixels.subarray((y * 612 + x) * 3, (y * 612 + x) * 3 + 3)];
    expect(pixel(200, 592)).toEqual([51, 102, 204]);
    expect(pixel(10, 10)).toEqual([255, 255, 255]);
    for (const [index, spec] of specs.entries()) {
      const [alone] = await renderPages(`alone-${index + 1}`, buildPdf([spec]));
      // byte-identical: nothing of an earlier page shows through, and the colours are straight RGB
      expect(together[index]!.pixels.equals(alone!.pixels), `page ${index + 1}`).toBe(true);
    }
    // the pages differ from each other (the comparison above is not between blank pages)
    expect(together[0]!.pixels.equals(together[1]!.pixels)).toBe(false);
    expect(together[1]!.pixels.equals(together[2]!.pixels)).toBe(false);
  });
});
