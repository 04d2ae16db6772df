import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sniffMimeType } from './mime.js';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

/** A zip local file header whose first entry is `name` with `content` (stored, or deflated as Office writes it). */
function zipWith(name: string, content = '', deflate = false): Buffer {
  const data = deflate ? deflateRawSync(content) : Buffer.from(content, 'latin1');
  const header = Buffer.alloc(30);
  header.write('PK\x03\x04', 0, 'latin1');
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(deflate ? 8 : 0, 8);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(content.length, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, Buffer.from(name, 'latin1'), data, Buffer.alloc(64)]);
}

/** An OOXML package's first entry, as Word, Excel and PowerPoint write it. */
const officeZip = (part: string, type: string) =>
  zipWith('[Content_Types].xml', `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/${part}" ContentType="application/vnd.openxmlformats-officedocument.${type}+xml"/></Types>`, true);

/** A TIFF header and its first IFD (one entry). */
const tiff = (littleEndian: boolean) => {
  const b = Buffer.alloc(64);
  b.write(littleEndian ? 'II' : 'MM', 0, 'latin1');
  if (littleEndian) { b.writeUInt16LE(42, 2); b.writeUInt32LE(8, 4); b.writeUInt16LE(1, 8); b.writeUInt16LE(256, 10); }
  else { b.writeUInt16BE(42, 2); b.writeUInt32BE(8, 4); b.writeUInt16BE(1, 8); b.writeUInt16BE(256, 10); }
  return b;
};

const bmp = () => {
  const b = Buffer.alloc(64);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(64, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  return b;
};

describe('sniffMimeType: magic bytes', async () => {
  it.each([
    ['pdf', bytes('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj'), 'application/pdf'],
    ['png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], 'IHDR'), 'image/png'],
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10], 'JFIF\0'), 'image/jpeg'],
    ['gif87a', bytes('GIF87a', [1, 0, 1, 0]), 'image/gif'],
    ['gif89a', bytes('GIF89a', [1, 0, 1, 0]), 'image/gif'],
    ['webp', bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
    ['tiff LE', tiff(true), 'image/tiff'],
    ['tiff BE', tiff(false), 'image/tiff'],
    ['bmp', bmp(), 'image/bmp'],
    ['zip', zipWith('readme.txt', 'hello'), 'application/zip'],
    ['empty zip', bytes('PK\x05\x06', Array(18).fill(0)), 'application/zip'],
    ['docx (no name, by content types)', officeZip('word/document.xml', 'wordprocessingml.document.main'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['xlsx (no name, by content types)', officeZip('xl/workbook.xml', 'spreadsheetml.sheet.main'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ['pptx (no name, by content types)', officeZip('ppt/presentation.xml', 'presentationml.presentation.main'), 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
    ['odt (mimetype entry)', zipWith('mimetype', 'application/vnd.oasis.opendocument.text'), 'application/vnd.oasis.opendocument.text'],
    ['epub (mimetype entry)', zipWith('mimetype', 'application/epub+zip'), 'application/epub+zip'],
    ['gzip', bytes([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0]), 'application/gzip'],
    ['mp3 with ID3', bytes('ID3', [4, 0, 0, 0, 0, 0, 0], [0xff, 0xfb, 0x90, 0x64], Array(64).fill(0)), 'audio/mpeg'],
    ['mp3 frame', bytes([0xff, 0xfb, 0x90, 0x64, 0, 0]), 'audio/mpeg'],
    ['mpeg-2 layer III frame', bytes([0xff, 0xf3, 0x48, 0xc4, 0, 0]), 'audio/mpeg'],
    ['mp4', bytes([0, 0, 0, 0x20], 'ftypisom', [0, 0, 2, 0], 'isomiso2mp41'), 'video/mp4'],
    ['m4a', bytes([0, 0, 0, 0x20], 'ftypM4A ', [0, 0, 0, 0]), 'audio/x-m4a'],
    ['quicktime', bytes([0, 0, 0, 0x14], 'ftypqt  ', [0, 0, 0, 0]), 'video/quicktime'],
    ['ogg', bytes('OggS', [0, 2], Array(20).fill(0), [1, 0x1e, 1], 'vorbis', Array(32).fill(0)), 'audio/ogg'],
    ['wav', bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt '), 'audio/wav'],
    ['flac', bytes('fLaC', [0, 0, 0, 0x22]), 'audio/flac'],
    ['webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 1], 'B\x82\x84webm'), 'video/webm'],
    ['7z', bytes([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0, 4]), 'application/x-7z-compressed'],
    ['rar', bytes('Rar!\x1a\x07\x01\x00'), 'application/x-rar-compressed'],
    ['ole2 without a name', bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], Array(8).fill(0)), 'application/x-cfb'],
    ['rtf', bytes('{\\rtf1\\ansi'), 'application/rtf'],
    ['postscript', bytes('%!PS-Adobe-3.0\n'), 'application/postscript'],
  ])('%s', async (_name, head, expected) => {
    expect(await sniffMimeType(head)).toBe(expected);
  });

  it('uses the name to tell office formats inside a zip', async () => {
    const zip = zipWith('[Content_Types].xml', '<Types/>');
    expect(await sniffMimeType(zip, 'letter.docx')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(await sniffMimeType(zip, 'Budget.XLSX')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(await sniffMimeType(zip, 'deck.pptx')).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation');
    expect(await sniffMimeType(zipWith('a.txt'), 'archive.zip')).toBe('application/zip');
    // a zip named .pdf is still a zip
    expect(await sniffMimeType(zipWith('a.txt'), 'fake.pdf')).toBe('application/zip');
  });

  it('uses the name to tell legacy office formats inside OLE2', async () => {
    const ole = bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], Array(8).fill(0));
    expect(await sniffMimeType(ole, 'old.doc')).toBe('application/msword');
    expect(await sniffMimeType(ole, 'old.xls')).toBe('application/vnd.ms-excel');
    expect(await sniffMimeType(ole, 'old.ppt')).toBe('application/vnd.ms-powerpoint');
  });

  it('trusts the bytes over the name', async () => {
    const png = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], 'IHDR', Array(17).fill(0));
    expect(await sniffMimeType(png, 'innocent.txt')).toBe('image/png');
    // bytes that are neither a known format nor text do not become text by their name
    expect(await sniffMimeType(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'innocent.txt')).toBe('application/octet-stream');
    expect(await sniffMimeType(bytes('%PDF-1.4'), 'x.html')).toBe('application/pdf');
  });
});

describe('sniffMimeType: leading text', async () => {
  it.each([
    ['svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10"></svg>', 'image/svg+xml'],
    ['svg with prolog', '<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n<svg/>', 'image/svg+xml'],
    ['xml', '<?xml version="1.0" encoding="UTF-8"?>\n<note><to>x</to></note>', 'application/xml'],
    ['xml with BOM', '\ufeff<?xml version="1.0"?><a/>', 'application/xml'],
    ['html doctype', '<!DOCTYPE html>\n<html><head></head></html>', 'text/html'],
    ['html lower', '  \n<html lang="en">', 'text/html'],
    ['html after comment', '<!-- page --><HTML>', 'text/html'],
    ['html fragment', '<div class="x">hi</div>', 'text/html'],
    ['json object', '{"a": 1, "b": [true, null]}', 'application/json'],
    ['json array', '[1, 2, 3]', 'application/json'],
    ['json with leading whitespace', '\n  {\n "a": "b" }\n', 'application/json'],
    ['not json: ini section', '[section]\nkey=value\n', 'text/plain'],
    ['not json: braces text', '{ this is not json }', 'text/plain'],
    ['plain text', 'Hello, world.\nSecond line.\n', 'text/plain'],
    ['utf-8 text', 'Grüße, 你好, привет 😀\n', 'text/plain'],
  ])('%s', async (_name, content, expected) => {
    expect(await sniffMimeType(Buffer.from(content, 'utf8'))).toBe(expected);
  });

  it('utf-16 text with a byte order mark', async () => {
    expect(await sniffMimeType(Buffer.from([0xff, 0xfe, 0x48, 0x00, 0x69, 0x00]))).toBe('text/plain');
    expect(await sniffMimeType(Buffer.from([0xfe, 0xff, 0x00, 0x48]), 'a.csv')).toBe('text/csv');
  });

  it('recognises truncated JSON in a full-size head', async () => {
    const json = Buffer.from(`{"items": [${'"xxxxxxxx", '.repeat(1000)}`);
    expect(await sniffMimeType(json.subarray(0, 4100))).toBe('application/json');
    expect(await sniffMimeType(Buffer.from(`[{"a": 1}, ${'{"a": 1}, '.repeat(500)}`).subarray(0, 4100))).toBe('application/json');
  });

  it('accepts a multi-byte character cut at the end of a full-size head', async () => {
    const text = Buffer.from('é'.repeat(3000)); // 6000 bytes
    expect(await sniffMimeType(text.subarray(0, 4099))).toBe('text/plain');
  });

  it('text with a NUL or binary control characters is not text', async () => {
    expect(await sniffMimeType(Buffer.from('abc\0def'))).toBe('application/octet-stream');
    expect(await sniffMimeType(Buffer.from('abc\x01\x02def'))).toBe('application/octet-stream');
    expect(await sniffMimeType(Buffer.from([0x61, 0xff, 0xfe, 0x62]))).toBe('application/octet-stream');
  });

  it('keeps a more precise text type from the name', async () => {
    expect(await sniffMimeType(Buffer.from('a,b\n1,2\n'), 'data.csv')).toBe('text/csv');
    expect(await sniffMimeType(Buffer.from('# Title\n'), 'README.md')).toBe('text/markdown');
    expect(await sniffMimeType(Buffer.from('body { color: red }'), 'site.css')).toBe('text/css');
    // but never a binary type for text bytes
    expect(await sniffMimeType(Buffer.from('hello'), 'photo.png')).toBe('text/plain');
  });
});

describe('sniffMimeType: fallbacks', async () => {
  it('unknown bytes use the extension map, then application/octet-stream', async () => {
    const unknown = Buffer.from([0x00, 0x01, 0x02, 0x03, 0x9a, 0xbc]);
    expect(await sniffMimeType(unknown, 'movie.avi')).toBe('video/x-msvideo');
    expect(await sniffMimeType(unknown, 'C:\\Users\\x\\song.mp3')).toBe('audio/mpeg');
    expect(await sniffMimeType(unknown, 'noext')).toBe('application/octet-stream');
    expect(await sniffMimeType(unknown, '.bashrc')).toBe('application/octet-stream');
    expect(await sniffMimeType(unknown)).toBe('application/octet-stream');
  });

  it('an empty file takes its type from the name', async () => {
    expect(await sniffMimeType(Buffer.alloc(0), 'empty.txt')).toBe('text/plain');
    expect(await sniffMimeType(Buffer.alloc(0), 'empty.docx')).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(await sniffMimeType(Buffer.alloc(0))).toBe('application/octet-stream');
  });
});
