/**
 * Content type detection from the first bytes of a file (FileStore keeps 4100 of them).
 *
 * Order: binary magic numbers (they win over the client's file name), then leading text
 * (svg / xml / html / json), then plain UTF-8 text, then the file name's extension, then
 * `application/octet-stream`. The file name only refines a detected container (zip → docx,
 * OLE2 → doc/xls/ppt) or a text file (.csv → text/csv); it never turns binary bytes into text.
 */
import path from 'node:path';

export const OCTET_STREAM = 'application/octet-stream';

const OOXML: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  docm: 'application/vnd.ms-word.document.macroEnabled.12',
  dotx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.template',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xlsm: 'application/vnd.ms-excel.sheet.macroEnabled.12',
  xltx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.template',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  pptm: 'application/vnd.ms-powerpoint.presentation.macroEnabled.12',
  potx: 'application/vnd.openxmlformats-officedocument.presentationml.template',
  ppsx: 'application/vnd.openxmlformats-officedocument.presentationml.slideshow',
};

const ZIP_BY_EXTENSION: Record<string, string> = {
  ...OOXML,
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  odg: 'application/vnd.oasis.opendocument.graphics',
  epub: 'application/epub+zip',
  jar: 'application/java-archive',
  apk: 'application/vnd.android.package-archive',
  kmz: 'application/vnd.google-earth.kmz',
  zip: 'application/zip',
};

const OLE_BY_EXTENSION: Record<string, string> = {
  doc: 'application/msword',
  dot: 'application/msword',
  xls: 'application/vnd.ms-excel',
  xlt: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  pps: 'application/vnd.ms-powerpoint',
  pot: 'application/vnd.ms-powerpoint',
  msg: 'application/vnd.ms-outlook',
  vsd: 'application/vnd.visio',
  msi: 'application/x-msi',
};

/** File extension (lowercase, no dot) → MIME type. Used when the bytes say nothing definite. */
export const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  ...ZIP_BY_EXTENSION,
  ...OLE_BY_EXTENSION,
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  svg: 'image/svg+xml',
  heic: 'image/heic',
  avif: 'image/avif',
  psd: 'image/vnd.adobe.photoshop',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  tar: 'application/x-tar',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  ogv: 'video/ogg',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ics: 'text/calendar',
  vcf: 'text/vcard',
  xml: 'application/xml',
  xsl: 'application/xml',
  xsd: 'application/xml',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  rtf: 'application/rtf',
  ps: 'application/postscript',
  eps: 'application/postscript',
  eml: 'message/rfc822',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  wasm: 'application/wasm',
};

/** Text-like types a file name may select for bytes that decode as text. */
function isTextual(type: string): boolean {
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type === 'application/xml' ||
    type === 'application/yaml' ||
    type === 'image/svg+xml' ||
    type === 'application/rtf' ||
    type === 'application/postscript' ||
    type === 'message/rfc822'
  );
}

function extensionOf(fileName: string | undefined): string {
  if (!fileName) return '';
  const base = path.posix.basename(fileName.replace(/\\/g, '/'));
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function startsWith(head: Buffer, bytes: readonly number[] | string, offset = 0): boolean {
  const sig = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
  if (head.length < offset + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (head[offset + i] !== sig[i]) return false;
  return true;
}

/** Detects the MIME type of content from its first bytes (and, as a hint, its file name). */
export function sniffMimeType(head: Buffer, fileName?: string): string {
  const ext = extensionOf(fileName);
  const byExtension = EXTENSION_TYPES[ext];
  if (head.length === 0) return byExtension ?? OCTET_STREAM;
  return sniffBinary(head, ext) ?? sniffText(head, byExtension) ?? byExtension ?? OCTET_STREAM;
}

function sniffBinary(head: Buffer, ext: string): string | undefined {
  // Documents
  if (head.subarray(0, 1024).includes('%PDF-', 0, 'latin1')) return 'application/pdf';
  if (startsWith(head, '%!PS')) return 'application/postscript';
  if (startsWith(head, '{\\rtf')) return 'application/rtf';

  // Images
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, 'GIF87a') || startsWith(head, 'GIF89a')) return 'image/gif';
  if (startsWith(head, 'RIFF') && startsWith(head, 'WEBP', 8)) return 'image/webp';
  if (startsWith(head, [0x49, 0x49, 0x2a, 0x00]) || startsWith(head, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (startsWith(head, [0x49, 0x49, 0x2b, 0x00]) || startsWith(head, [0x4d, 0x4d, 0x00, 0x2b])) return 'image/tiff'; // BigTIFF
  if (startsWith(head, 'BM') && head.length >= 14 && isBmpHeader(head)) return 'image/bmp';
  if (startsWith(head, [0x00, 0x00, 0x01, 0x00]) && ext === 'ico') return 'image/vnd.microsoft.icon';
  if (startsWith(head, '8BPS')) return 'image/vnd.adobe.photoshop';

  // Containers and archives
  if (startsWith(head, 'PK\x03\x04') || startsWith(head, 'PK\x05\x06') || startsWith(head, 'PK\x07\x08')) {
    return sniffZip(head, ext);
  }
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    return OLE_BY_EXTENSION[ext] ?? 'application/x-ole-storage';
  }
  if (startsWith(head, [0x1f, 0x8b])) return 'application/gzip';
  if (startsWith(head, 'BZh') && head.length > 3 && head[3]! >= 0x31 && head[3]! <= 0x39) return 'application/x-bzip2';
  if (startsWith(head, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return 'application/x-xz';
  if (startsWith(head, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return 'application/x-7z-compressed';
  if (startsWith(head, 'Rar!\x1a\x07')) return 'application/vnd.rar';
  if (startsWith(head, 'ustar', 257)) return 'application/x-tar';

  // Audio / video
  if (startsWith(head, 'RIFF') && startsWith(head, 'WAVE', 8)) return 'audio/wav';
  if (startsWith(head, 'RIFF') && startsWith(head, 'AVI ', 8)) return 'video/x-msvideo';
  if (startsWith(head, 'OggS')) {
    const text = head.toString('latin1');
    return text.includes('\x80theora') ? 'video/ogg' : 'audio/ogg';
  }
  if (startsWith(head, 'fLaC')) return 'audio/flac';
  if (startsWith(head, 'ftyp', 4)) return sniffIsoBmff(head);
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) {
    return head.toString('latin1').includes('webm') ? 'video/webm' : 'video/x-matroska';
  }
  if (startsWith(head, 'ID3')) return 'audio/mpeg';
  if (isMpegAudioFrame(head)) return 'audio/mpeg';

  // Fonts, binaries
  if (startsWith(head, 'wOFF')) return 'font/woff';
  if (startsWith(head, 'wOF2')) return 'font/woff2';
  if (startsWith(head, [0x00, 0x61, 0x73, 0x6d])) return 'application/wasm';
  return undefined;
}

function isBmpHeader(head: Buffer): boolean {
  // BITMAPFILEHEADER: reserved fields (bytes 6..9) are zero; DIB header size is a known value.
  if (head.readUInt32LE(6) !== 0) return false;
  if (head.length < 18) return true;
  const dib = head.readUInt32LE(14);
  return [12, 16, 40, 52, 56, 64, 108, 124].includes(dib);
}

function isMpegAudioFrame(head: Buffer): boolean {
  if (head.length < 4 || head[0] !== 0xff) return false;
  const b1 = head[1]!;
  const b2 = head[2]!;
  if ((b1 & 0xe0) !== 0xe0) return false; // frame sync
  if ((b1 & 0x18) === 0x08) return false; // reserved MPEG version
  const layer = b1 & 0x06; // 0x02 = Layer III (mp3), 0x04 = Layer II; Layer I (0x06) is rare and
  if (layer !== 0x02 && layer !== 0x04) return false; // FF FE is also the UTF-16 LE byte order mark
  if ((b2 & 0xf0) === 0xf0) return false; // bad bitrate index
  if ((b2 & 0x0c) === 0x0c) return false; // reserved sample rate
  return true;
}

function sniffIsoBmff(head: Buffer): string {
  const brand = head.toString('latin1', 8, 12);
  if (brand === 'M4A ' || brand === 'M4B ' || brand === 'M4P ') return 'audio/mp4';
  if (brand === 'qt  ') return 'video/quicktime';
  if (brand.startsWith('3gp')) return 'video/3gpp';
  if (brand.startsWith('3g2')) return 'video/3gpp2';
  if (brand === 'avif' || brand === 'avis') return 'image/avif';
  if (brand === 'heic' || brand === 'heix' || brand === 'mif1' || brand === 'msf1') return 'image/heic';
  if (brand === 'crx ') return 'image/x-canon-cr3';
  return 'video/mp4';
}

function sniffZip(head: Buffer, ext: string): string {
  const byName = ZIP_BY_EXTENSION[ext];
  // ODF / EPUB: a stored (uncompressed) first entry "mimetype" holding the type.
  if (startsWith(head, 'PK\x03\x04') && head.length >= 30) {
    const method = head.readUInt16LE(8);
    const storedSize = head.readUInt32LE(18);
    const nameLength = head.readUInt16LE(26);
    const extraLength = head.readUInt16LE(28);
    if (method === 0 && nameLength === 8 && startsWith(head, 'mimetype', 30) && storedSize > 0 && storedSize < 100) {
      const start = 30 + nameLength + extraLength;
      const type = head.toString('latin1', start, start + storedSize);
      if (start + storedSize <= head.length && /^application\/[a-z0-9.+-]+$/.test(type)) return type;
    }
  }
  if (byName && byName !== 'application/zip') return byName;
  // OOXML without a helpful name: part names in the first local headers.
  const text = head.toString('latin1');
  if (text.includes('[Content_Types].xml') || text.includes('_rels/.rels')) {
    if (text.includes('word/')) return OOXML.docx!;
    if (text.includes('xl/')) return OOXML.xlsx!;
    if (text.includes('ppt/')) return OOXML.pptx!;
  }
  return 'application/zip';
}

function sniffText(head: Buffer, byExtension: string | undefined): string | undefined {
  // UTF-16 with a byte order mark: text, but none of our leading-text rules apply.
  if (startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff])) {
    return byExtension && isTextual(byExtension) ? byExtension : 'text/plain';
  }
  const bom = startsWith(head, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  const body = head.subarray(bom);
  const text = decodeUtf8Text(body);
  if (text === undefined) return undefined;

  const leading = text.trimStart();
  const prolog = scanProlog(leading);
  const root = prolog.rootElement?.toLowerCase();
  const doctype = prolog.doctype?.toLowerCase();
  if (root === 'svg' || root?.endsWith(':svg') || doctype === 'svg') return 'image/svg+xml';
  if (doctype === 'html' || (root !== undefined && HTML_ELEMENTS.has(root) && !prolog.xmlDeclaration)) {
    return 'text/html';
  }
  if (root === 'html' && prolog.xmlDeclaration) return 'application/xhtml+xml';
  if (prolog.xmlDeclaration || doctype !== undefined) return xmlFlavour(byExtension);
  if (looksLikeJson(leading, head.length < 4100)) return 'application/json';
  if (byExtension && isTextual(byExtension)) return byExtension;
  return 'text/plain';
}

// Elements that mark an HTML document or fragment at the start of a file (WHATWG sniffing list).
const HTML_ELEMENTS = new Set([
  'html', 'head', 'body', 'script', 'iframe', 'h1', 'div', 'font', 'table', 'a', 'style', 'title', 'b', 'br', 'p',
]);

interface Prolog {
  xmlDeclaration: boolean;
  doctype?: string;
  rootElement?: string;
}

/**
 * Skips an XML declaration, processing instructions, comments and a doctype at the start of
 * `text` (no regular expressions over unbounded input), and names the first element.
 */
function scanProlog(text: string): Prolog {
  const result: Prolog = { xmlDeclaration: false };
  let i = 0;
  const limit = Math.min(text.length, 4096);
  for (let steps = 0; steps < 64 && i < limit; steps++) {
    while (i < limit && /\s/.test(text[i]!)) i++;
    if (text.startsWith('<?', i)) {
      if (text.slice(i, i + 6).toLowerCase().startsWith('<?xml') && /[\s?]/.test(text[i + 5] ?? '')) {
        result.xmlDeclaration = true;
      }
      const close = text.indexOf('?>', i + 2);
      if (close < 0) return result;
      i = close + 2;
    } else if (text.startsWith('<!--', i)) {
      const close = text.indexOf('-->', i + 4);
      if (close < 0) return result;
      i = close + 3;
    } else if (text.slice(i, i + 9).toLowerCase() === '<!doctype') {
      const name = /^<!doctype\s+([A-Za-z_][\w.:-]*)/i.exec(text.slice(i, i + 200));
      if (name) result.doctype = name[1]!;
      const close = text.indexOf('>', i);
      if (close < 0) return result;
      i = close + 1;
    } else if (text[i] === '<') {
      const name = /^<([A-Za-z_][\w.:-]*)(?=[\s>/]|$)/.exec(text.slice(i, i + 100));
      if (name) result.rootElement = name[1]!;
      return result;
    } else {
      return result;
    }
  }
  return result;
}

function xmlFlavour(byExtension: string | undefined): string {
  // An .xsd/.xsl/.svg/... name keeps its more precise XML-based type.
  return byExtension && (byExtension.endsWith('+xml') || byExtension === 'application/xml')
    ? byExtension
    : 'application/xml';
}

/**
 * JSON: a complete head must parse; a truncated one must open like a JSON object or array
 * (`{"`, `{}`, `[{`, `["`, `[1`, `[true` …), which INI sections (`[name]`) do not.
 */
function looksLikeJson(text: string, complete: boolean): boolean {
  const first = text[0];
  if (first !== '{' && first !== '[') return false;
  if (complete) {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  }
  if (first === '{') return /^\{\s*("|\})/.test(text);
  return /^\[\s*(\{|\[|"|-?\d|true\b|false\b|null\b|\])/.test(text);
}

// C0 controls other than TAB, LF, VT, FF, CR and ESC (and NUL) mark binary content.
const BINARY_CONTROL = /[\x00-\x08\x0e-\x1a\x1c-\x1f]/;

/** The text if `bytes` are UTF-8 without binary control characters (a cut trailing sequence is allowed). */
function decodeUtf8Text(bytes: Buffer): string | undefined {
  let text: string;
  try {
    // stream: true tolerates a multi-byte sequence cut at the end of the head.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: true });
  } catch {
    return undefined;
  }
  return BINARY_CONTROL.test(text) ? undefined : text;
}
