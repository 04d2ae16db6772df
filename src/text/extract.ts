import { open } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from 'htmlparser2';

/** How the text of a resource is read (each kind in the bounded extraction process, workers/extract/extract-child.ts). */
export type TextKind = 'plain' | 'html' | 'xml' | 'pdf' | 'docx' | 'image';

/** Images whose text OCR reads (DESIGN §12). */
const ocrImageTypes = new Set(['image/png', 'image/jpeg', 'image/tiff', 'image/webp']);
const ocrImageExtensions = new Set(['.png', '.jpg', '.jpeg', '.tif', '.tiff', '.webp']);

const docxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const plainExtensions = new Set(['.txt', '.md', '.markdown', '.csv', '.json', '.log']);
const plainTypes = new Set(['application/json', 'application/csv', 'application/x-ndjson']);

/** How many of a file's first bytes `hasPdfMark` looks at. */
export const pdfMarkBytes = 1024;

/** Whether a file's first bytes (`pdfMarkBytes` of them, or more) hold `%PDF-`: a PDF whatever it is called. */
export const hasPdfMark = (head: Buffer): boolean => head.subarray(0, pdfMarkBytes).includes('%PDF-');

/** The kind of text a resource holds, by its media type, its name's extension and (for PDFs) its first bytes' `hasPdfMark`; undefined when none is read. */
export function textKindOf(mimeType: string, name: string, pdfMark: boolean): TextKind | undefined {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  const extension = path.extname(name).toLowerCase();
  if (type === 'application/pdf' || extension === '.pdf' || pdfMark) return 'pdf';
  if (type === docxType || extension === '.docx') return 'docx';
  if (type === 'text/html' || type === 'application/xhtml+xml' || extension === '.html' || extension === '.htm') return 'html';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml') || extension === '.xml') return 'xml';
  if (type.startsWith('text/') || plainTypes.has(type) || plainExtensions.has(extension)) return 'plain';
  if (ocrImageTypes.has(type) || ocrImageExtensions.has(extension)) return 'image';
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

/** HTML elements whose content is code, not text. */
const codeElements = new Set(['script', 'style']);

/**
 * The text of markup: tags, comments, declarations and processing instructions dropped (in HTML also
 * the content of script and style), entities decoded (HTML: every named one, `&eacute;`; XML: its
 * five), CDATA kept as text with the markup it carries stripped as HTML (HTML in a feed). Each tag
 * stands for a space, so that the words of neighbouring elements stay apart.
 *
 * htmlparser2's tokenizer reads it in one pass, linear in the input whatever it holds (unclosed
 * comments, CDATA or script, `<a` repeated: 1 MB of each in about 0.1 s; the regular expressions used
 * before took 1–3 s on 64 KB of `<!--` or `<a`, in the service's event loop). Its Parser is not used:
 * its stack of open elements is quadratic on deep nesting (393 KB of nested `<b><i>` took 1.7 s).
 */
export function markupText(source: string, kind: 'html' | 'xml'): string {
  return tokenizedText(source, kind === 'xml', false);
}

/** `cdataAsText`: CDATA inside CDATA's content is taken as it is, so a nested section is read at most twice, never once per level. */
function tokenizedText(source: string, xmlMode: boolean, cdataAsText: boolean): string {
  const parts: string[] = [];
  let tagName = '';
  let inCode = false;
  const space = () => void parts.push(' ');
  const tokenizer = new Tokenizer(
    { xmlMode, decodeEntities: true },
    {
      ontext: (start, end) => void (inCode || parts.push(source.slice(start, end))),
      ontextentity: (codePoint) => void (inCode || parts.push(String.fromCodePoint(codePoint))),
      oncdata: (start, end, endOffset) => {
        const content = source.slice(start, end - endOffset);
        parts.push(' ', cdataAsText ? content : tokenizedText(content, false, true), ' ');
      },
      onopentagname: (start, end) => {
        tagName = xmlMode ? '' : source.slice(start, end).toLowerCase();
        space();
      },
      // the tokenizer reads what follows <script> or <style> (not self-closing) as raw text up to its end tag
      onopentagend: () => void (inCode = codeElements.has(tagName)),
      onselfclosingtag: () => undefined,
      onclosetag: () => {
        inCode = false;
        space();
      },
      oncomment: space,
      ondeclaration: space,
      onprocessinginstruction: space,
      onattribname: () => undefined,
      onattribdata: () => undefined,
      onattribentity: () => undefined,
      onattribend: () => undefined,
      onend: () => undefined,
    },
  );
  tokenizer.write(source);
  tokenizer.end();
  return parts.join('');
}

/** Text of a plain or markup resource: only its first bytes are read (four per kept character at most, UTF-8's widest), so a huge file costs no more than a small one. */
export async function plainOrMarkupText(file: string, kind: 'plain' | 'html' | 'xml', maxChars: number): Promise<{ text: string; truncated: boolean }> {
  // markup loses characters to its tags: read more of it, still bounded
  const factor = kind === 'plain' ? 4 : 16;
  const head = await readHead(file, maxChars * factor + 1);
  const readAll = head.length <= maxChars * factor;
  // a byte order mark is no character of the text (else it sticks to the first word)
  const decoded = head.subarray(0, Math.min(head.length, maxChars * factor)).toString('utf8').replace(/^\uFEFF/, '');
  const text = kind === 'plain' ? decoded : markupText(decoded, kind);
  return { text: text.slice(0, maxChars), truncated: !readAll || text.length > maxChars };
}

/**
 * Runs of non-blank characters longer than this keep only their letters, marks and digits (`storableText`):
 * a URL, path, e-mail address or host name up to this length stays one token of the text search parser.
 */
export const longestTokenRun = 128;

/**
 * Text as the index keeps it: NFKC-normalised, as searches are (`café` typed as `e` + accent is the
 * same word, and so are a ligature `ﬀ` and `ff`, Arabic presentation forms and their letters, a
 * fullwidth `Ａ` and `A`: what a reader sees is what a keyboard types); control characters as spaces (Postgres text holds no NUL, a tsvector has no use for the
 * others), and so the replacement character, which stands for bytes or code points that could not be
 * read — and for a lone surrogate (`toWellFormed`), such as the half of a pair a cut at
 * FULLTEXT_MAX_TEXT_CHARS leaves: Postgres refuses those in JSON.
 *
 * And what Postgres's text search parser (to_tsvector, the generated `document`) reads in quadratic
 * time is taken apart: at a `<` it tries a tag or comment, which may span blanks, up to the end of the
 * text (64 KB of `<!--` took 11–17 s), so `<` is a space; at `_ / . ~` and their like it tries a host,
 * path or URL up to the next blank (64 KB of `a_` took 42 s, of `/~` 68 s), so a run of non-blank
 * characters longer than `longestTokenRun` keeps its words only. The parser is then linear: 256 KB of
 * any of them in 110 ms at most (docs/search.md).
 */
export const storableText = (text: string) =>
  text
    .toWellFormed()
    .normalize('NFKC')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffd<]/g, ' ')
    .replace(/[^ \t\n\r]+/g, (run) => (run.length <= longestTokenRun ? withAddressParts(run) : run.replace(/[^\p{L}\p{M}\p{N}]+/gu, ' ')));

/**
 * A character the parser keeps inside a token, between two letters or digits: a URL's, path's, e-mail
 * address's or host name's dots, slashes and the like, or a character outside ASCII that is neither
 * letter, mark, digit nor blank — an elision's apostrophe (`l’impayé`), a bullet between words
 * (`인터뷰●홍인혜`). Not `-` (the parser splits hyphenated words itself) nor ASCII it splits at (`<`, `,`).
 */
const addressJoint = /[\p{L}\p{N}]([./@:_~?=&#%+]|[^\p{L}\p{M}\p{N}\s\x00-\x7f])[\p{L}\p{N}]/u;

/**
 * A URL, e-mail address, host name, path or other run of words joined by such characters, which
 * Postgres's parser keeps as one token (`http://blog.nihilogic.dk/`), followed by its words
 * (`http blog nihilogic dk`): found whole and by any of its parts, in both text indexes (the
 * adapter indexes the same text).
 */
function withAddressParts(run: string): string {
  if (!addressJoint.test(run)) return run;
  const parts = run.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
  return parts.length > 1 ? `${run} ${parts.join(' ')}` : run;
}
