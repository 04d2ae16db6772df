import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildPool } from '../child/bounded-child.js';
import { buildPdf, objectsPage, type PageSpec, textPage } from '../../test/helpers/pdf.js';
import { renderInChild, renderPool } from './render-process.js';

let dir: string;
let pool: ChildPool;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-render-child-'));
  pool = renderPool(1024, 1);
});
afterAll(async () => {
  pool.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Pixels of a PNG as RGB (a grey page is stored with one channel). */
const rgbPixels = (file: string) => sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

/**
 * Renders `pdf` at `dpi` in a process of `from` and returns each page's decoded RGB pixels and its
 * PNG's channels, in the order the pages were reported.
 */
async function renderPages(name: string, pdf: Buffer, from = pool, { dpi = 72, maxPixels = 10_000_000, timeoutMs = 60_000 } = {}) {
  const inputPath = path.join(dir, `${name}.pdf`);
  await fs.writeFile(inputPath, pdf);
  const pages: { page: number; pixels: Buffer; channels: number }[] = [];
  await renderInChild(
    from,
    { type: 'start', inputPath, fileName: `${name}.pdf`, kind: 'pdf', format: 'png', dpi, maxPixels, maxPagePixels: maxPixels, outputDir: path.join(dir, name) },
    timeoutMs,
    {
      inspected: async () => ({ type: 'render', placeholders: [], skip: [] }),
      page: async (page) => {
        const { channels } = await sharp(page.path).metadata();
        pages.push({ page: page.page, pixels: (await rgbPixels(page.path)).data, channels });
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

describe('rendered pages stay as they were drawn before the grey PNGs', () => {
  /** The fixture document: page 1 text only, page 2 an image, a caption and a coloured rectangle. */
  function fixturePdf(): Buffer {
    const rgb = Buffer.alloc(80 * 60 * 3);
    for (let y = 0; y < 60; y++) {
      for (let x = 0; x < 80; x++) {
        const i = (y * 80 + x) * 3;
        rgb[i] = (x * 255) / 80;
        rgb[i + 1] = (y * 255) / 60;
        rgb[i + 2] = (x ^ y) & 255;
      }
    }
    return buildPdf([
      textPage(Array.from({ length: 40 }, (_, l) => `Line ${l + 1}: the quick brown fox jumps over the lazy dog, 0123456789 (fixture).`)),
      { content: 'q 400 0 0 300 100 400 cm /Im1 Do Q\nBT /F1 14 Tf 100 380 Td (Figure 1: a gradient) Tj ET\n0.2 0.4 0.8 rg 100 100 200 200 re f', image: { width: 80, height: 60, rgb } },
    ]);
  }

  it('each page matches the RGB rendering of the previous implementation (test/fixtures/render), a text page stored as one grey channel', async () => {
    const pages = await renderPages('fixture', fixturePdf());
    expect(pages.map((p) => p.channels)).toEqual([1, 3]);
    for (const page of pages) {
      const reference = await rgbPixels(fileURLToPath(new URL(`../../../test/fixtures/render/page-${page.page}.png`, import.meta.url)));
      expect(page.pixels.length).toBe(reference.data.length);
      // the same drawing: a library update may move an edge's antialiasing by a level or two, not more
      let far = 0;
      let sum = 0;
      for (let i = 0; i < page.pixels.length; i++) {
        const difference = Math.abs(page.pixels[i]! - reference.data[i]!);
        sum += difference;
        if (difference > 32) far++;
      }
      expect(far / page.pixels.length, `page ${page.page}: share of values off by more than 32`).toBeLessThan(0.001);
      expect(sum / page.pixels.length, `page ${page.page}: mean difference`).toBeLessThan(0.5);
    }
    // the text page is not blank: its pixels are black to white
    expect(pages[0]!.pixels.reduce((darkest, value) => Math.min(darkest, value), 255)).toBeLessThan(64);
  });
});

describe('warm render processes', () => {
  it('serve conversion after conversion; one that broke its memory bound or deadline is replaced, not reused', async () => {
    const bounded = renderPool(400, 1);
    try {
      const document = buildPdf([textPage(['a line of text']), objectsPage(40)]);
      const first = await renderPages('warm-1', document, bounded);
      const [process1] = bounded.waitingPids;
      expect(process1).toBeDefined();
      // a document the process itself rejects leaves it fit for the next one
      await expect(renderPages('warm-corrupt', Buffer.from('%PDF-1.7\nnot a pdf at all'), bounded)).rejects.toMatchObject({ reasonCode: 'illegalArguments' });
      const second = await renderPages('warm-2', document, bounded);
      expect(bounded.waitingPids).toEqual([process1]);
      expect(second.map((p) => p.pixels.equals(first[p.page - 1]!.pixels))).toEqual([true, true]);

      // a 10,000 × 10,000 pixel page needs 400 MB of canvas besides the process: over its 400 MB bound, it is killed
      const huge = buildPdf([{ ...objectsPage(5), width: 10_000, height: 10_000 }]);
      await expect(renderPages('warm-huge', huge, bounded, { maxPixels: 100_000_000 })).rejects.toMatchObject({ reasonCode: 'conversionMemoryExceeded' });
      expect(bounded.waitingPids).toEqual([]);
      const third = await renderPages('warm-3', document, bounded);
      const [process2] = bounded.waitingPids;
      expect(process2).toBeDefined();
      expect(process2).not.toBe(process1);
      expect(third.map((p) => p.pixels.equals(first[p.page - 1]!.pixels))).toEqual([true, true]);

      // past its deadline: killed too
      const long = buildPdf(Array.from({ length: 30 }, () => objectsPage(2000)));
      await expect(renderPages('warm-slow', long, bounded, { dpi: 300, timeoutMs: 300 })).rejects.toMatchObject({ reasonCode: 'conversionTimeout' });
      expect(bounded.waitingPids).toEqual([]);
      await renderPages('warm-4', document, bounded);
      expect(bounded.waitingPids).toHaveLength(1);
      expect([process1, process2]).not.toContain(bounded.waitingPids[0]);
    } finally {
      bounded.close();
    }
  });
});

describe('a render process that dies', () => {
  it('in the middle of a job: the job fails with conversionFailed and the next job gets a new process', async () => {
    const bounded = renderPool(1024, 1);
    try {
      await bounded.warm();
      const [crashing] = bounded.waitingPids;
      expect(crashing).toBeDefined();
      const inputPath = path.join(dir, 'crash.pdf');
      await fs.writeFile(inputPath, buildPdf(Array.from({ length: 30 }, () => objectsPage(2000))));
      const job = renderInChild(
        bounded,
        { type: 'start', inputPath, fileName: 'crash.pdf', kind: 'pdf', format: 'png', dpi: 300, maxPixels: 100_000_000, maxPagePixels: 100_000_000, outputDir: path.join(dir, 'crash') },
        60_000,
        {
          inspected: async () => {
            // killed once the decision is on its way, while it renders (as the kernel's OOM killer or a crash would)
            setTimeout(() => process.kill(crashing!, 'SIGKILL'), 0);
            return { type: 'render', placeholders: [], skip: [] };
          },
          page: async () => undefined,
        },
      );
      await expect(job).rejects.toMatchObject({ reasonCode: 'conversionFailed', message: expect.stringContaining('SIGKILL') });
      expect(bounded.waitingPids).toEqual([]);
      await renderPages('after-crash', buildPdf([textPage(['a line of text'])]), bounded);
      expect(bounded.waitingPids).toHaveLength(1);
      expect(bounded.waitingPids[0]).not.toBe(crashing);
    } finally {
      bounded.close();
    }
  });
});
