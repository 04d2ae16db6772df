import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A page as a scanner sees it: lines of black text on white, drawn by librsvg into a grey PNG of an A4
 * page at `dpi` (tests and the OCR benchmark: the text is known, so OCR's accuracy can be measured).
 */
export async function scannedPage(lines: string[], dpi = 150): Promise<Buffer> {
  const width = Math.round(8.27 * dpi);
  const height = Math.round(11.69 * dpi);
  const size = Math.round(dpi / 6);
  const text = lines.map((line, index) => `<text x="${size * 3}" y="${size * 4 + index * size * 1.6}">${escapeXml(line)}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/><g font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="black">${text}</g></svg>`;
  return sharp(Buffer.from(svg)).grayscale().png().toBuffer();
}

/** A PDF of scanned pages: each page one image and no text layer (what full text cannot read without OCR). */
export async function scannedPdf(pages: string[][], dpi = 150): Promise<Buffer> {
  const document = await PDFDocument.create();
  for (const lines of pages) {
    const image = await document.embedPng(await scannedPage(lines, dpi));
    const page = document.addPage([595.28, 841.89]);
    page.drawImage(image, { x: 0, y: 0, width: 595.28, height: 841.89 });
  }
  return Buffer.from(await document.save());
}
