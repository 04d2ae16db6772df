import { deflateSync } from 'node:zlib';

/** One page of a generated PDF: its size in points and its content stream (PDF operators). */
export interface PageSpec {
  width?: number;
  height?: number;
  content: string | Buffer;
  /** the content stream, FlateDecode'd (default true) */
  compress?: boolean;
  /** an RGB image XObject named /Im1 on the page */
  image?: { width: number; height: number; rgb: Buffer };
}

export interface PdfOptions {
  /** a Standard security handler whose user password is not empty: readers need a password */
  encrypted?: boolean;
  /** the /Count written in the page tree (default: the number of pages) */
  declaredCount?: number;
}

/**
 * A small PDF writer for tests and benchmarks: a catalog, a page tree, Helvetica as /F1, each page with
 * its content stream (and an image), and a correct cross-reference table. Pages given as one object
 * share their content stream and image (a document of many pages stays small).
 */
export function buildPdf(pages: PageSpec[], options: PdfOptions = {}): Buffer {
  const objects: Buffer[] = [];
  const add = (body: Buffer | string) => {
    objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    return objects.length;
  };
  const stream = (dictionary: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`<< ${dictionary} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  const catalog = add('');
  const tree = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const kids: number[] = [];
  const written = new Map<PageSpec, { content: number; xobjects: string }>();
  const writeContent = (page: PageSpec) => {
    const raw = typeof page.content === 'string' ? Buffer.from(page.content, 'latin1') : page.content;
    const compress = page.compress ?? true;
    const content = add(stream(compress ? '/Filter /FlateDecode' : '', compress ? deflateSync(raw) : raw));
    let xobjects = '';
    if (page.image) {
      const image = add(
        stream(`/Type /XObject /Subtype /Image /Width ${page.image.width} /Height ${page.image.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode`, deflateSync(page.image.rgb)),
      );
      xobjects = ` /XObject << /Im1 ${image} 0 R >>`;
    }
    return { content, xobjects };
  };
  for (const page of pages) {
    const shared = written.get(page) ?? writeContent(page);
    written.set(page, shared);
    kids.push(
      add(`<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 ${page.width ?? 612} ${page.height ?? 792}] /Resources << /Font << /F1 ${font} 0 R >>${shared.xobjects} >> /Contents ${shared.content} 0 R >>`),
    );
  }
  objects[catalog - 1] = Buffer.from(`<< /Type /Catalog /Pages ${tree} 0 R >>`, 'latin1');
  objects[tree - 1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${options.declaredCount ?? pages.length} >>`, 'latin1');
  let encrypt = '';
  if (options.encrypted) {
    const filler = 'A'.repeat(64);
    encrypt = ` /Encrypt ${add(`<< /Filter /Standard /V 1 /R 2 /O <${filler}> /U <${filler}> /P -4 >>`)} 0 R /ID [<0123456789ABCDEF0123456789ABCDEF> <0123456789ABCDEF0123456789ABCDEF>]`;
  }
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let offset = parts[0]!.length;
  objects.forEach((body, index) => {
    const chunk = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
    offsets.push(offset);
    offset += chunk.length;
    parts.push(chunk);
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${encrypt} >>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A page of text lines (each line one text run). */
export function textPage(lines: string[]): PageSpec {
  const escaped = lines.map((line, i) => `BT /F1 11 Tf 56 ${740 - i * 14} Td (${line.replace(/[()\\]/g, (c) => `\\${c}`)}) Tj ET`);
  return { content: escaped.join('\n') };
}

/** A page with `count` painting operations: small filled rectangles. */
export function objectsPage(count: number): PageSpec {
  const parts: string[] = ['0 0 1 rg'];
  for (let i = 0; i < count; i++) parts.push(`${(i * 7) % 600} ${(i * 13) % 780} 2 2 re f`);
  return { content: parts.join('\n') };
}

/** A PDF of `pages` pages, each with `linesPerPage` lines of text. */
export function textPdf(pages: number, linesPerPage = 40): Buffer {
  return buildPdf(
    Array.from({ length: pages }, (_, p) => textPage(Array.from({ length: linesPerPage }, (_, l) => `Page ${p + 1}, line ${l + 1}: the quick brown fox jumps over the lazy dog.`))),
  );
}
