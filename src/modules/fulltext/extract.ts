import { open } from 'node:fs/promises';
import path from 'node:path';
import { decodeHTML, decodeXML } from 'entities';

/** How the text of a resource is read: in this process (plain text, markup) or in a bounded child (pdf, docx). */
export type TextKind = 'plain' | 'html' | 'xml' | 'pdf' | 'docx';

const docxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const plainExtensions = new Set(['.txt', '.md', '.markdown', '.csv', '.json', '.log']);
const plainTypes = new Set(['application/json', 'application/csv', 'application/x-ndjson']);

/** The kind of text a resource holds, by its media type, its name's extension and (for PDFs) its first bytes; undefined when none is read. */
export function textKindOf(mimeType: string, name: string, head: Buffer): TextKind | undefined {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  const extension = path.extname(name).toLowerCase();
  if (type === 'application/pdf' || extension === '.pdf' || head.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (type === docxType || extension === '.docx') return 'docx';
  if (type === 'text/html' || type === 'application/xhtml+xml' || extension === '.html' || extension === '.htm') return 'html';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml') || extension === '.xml') return 'xml';
  if (type.startsWith('text/') || plainTypes.has(type) || plainExtensions.has(extension)) return 'plain';
  return undefined;
}

/** The first `bytes` bytes of a file. */
export async function readHead(file: string, bytes: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The text of markup: elements dropped (with the content of script and style in HTML), entities decoded (all of HTML's named ones: `&eacute;`). Linear in the input. */
export function markupText(source: string, kind: 'html' | 'xml'): string {
  const withoutCode = kind === 'html' ? source.replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ') : source;
  const text = withoutCode
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, ' $1 ')
    // only what opens like a tag is one: a bare '<' in text ("1 < 2 and 3 > 2") would swallow the words up to the next '>'
    .replace(/<[a-zA-Z\/!?][^>]*>/g, ' ');
  return kind === 'html' ? decodeHTML(text) : decodeXML(text);
}

/**
 * The text of a plain or markup resource, read in this process: only its first bytes are read (four
 * per kept character at most, UTF-8's widest), so a huge file costs no more than a small one.
 */
export async function inProcessText(
  file: string,
  kind: 'plain' | 'html' | 'xml',
  maxChars: number,
  /** the whole file, when the caller has read it already */
  whole?: Buffer,
): Promise<{ text: string; truncated: boolean }> {
  // markup loses characters to its tags: read more of it, still bounded
  const factor = kind === 'plain' ? 4 : 16;
  const head = whole && whole.length <= maxChars * factor + 1 ? whole : await readHead(file, maxChars * factor + 1);
  const readAll = head.length <= maxChars * factor;
  // a byte order mark is no character of the text (else it sticks to the first word)
  const decoded = head.subarray(0, Math.min(head.length, maxChars * factor)).toString('utf8').replace(/^\uFEFF/, '');
  const text = kind === 'plain' ? decoded : markupText(decoded, kind);
  return { text: text.slice(0, maxChars), truncated: !readAll || text.length > maxChars };
}

/**
 * Text as the index keeps it: NFC-normalised, as searches are (`café` typed as `e` + accent is the
 * same word); control characters as spaces (Postgres text holds no NUL, a tsvector has no use for the
 * others), and so the replacement character, which stands for bytes or code points that could not be
 * read — and for a lone surrogate (`toWellFormed`), such as the half of a pair a cut at
 * FULLTEXT_MAX_TEXT_CHARS leaves: Postgres refuses those in JSON.
 */
export const storableText = (text: string) =>
  text
    .toWellFormed()
    .normalize('NFC')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffd]/g, ' ');
