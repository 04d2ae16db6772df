/**
 * HTTP helpers for downloads: single byte ranges (RFC 9110 §14) and Content-Disposition
 * (RFC 6266 with RFC 5987/8187 `filename*`).
 */

export interface ParsedRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive (already clamped to size - 1). */
  end: number;
}

/**
 * Parses a Range header against a representation of `size` bytes.
 *
 * - `undefined`: serve the full representation (200): no header, another range unit, a syntax
 *   error or an invalid range (`bytes=5-2`), several ranges (multipart/byteranges is not
 *   offered), or a suffix range of an empty representation.
 * - `'unsatisfiable'`: answer 416 with `Content-Range: bytes * /size`: first-pos ≥ size, or a
 *   zero-length suffix (`bytes=-0`).
 * - `{start, end}`: answer 206 with `Content-Range: bytes start-end/size`.
 */
export function parseRange(header: string | undefined, size: number): ParsedRange | 'unsatisfiable' | undefined {
  if (header === undefined || header === null) return undefined;
  const value = String(header).trim();
  const eq = value.indexOf('=');
  if (eq < 0 || value.slice(0, eq).trim().toLowerCase() !== 'bytes') return undefined;
  // range-set = 1#range-spec: a comma list, empty elements allowed, OWS around elements.
  const specs = value
    .slice(eq + 1)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (specs.length !== 1) return undefined;
  const spec = specs[0]!;

  const suffix = /^-(\d+)$/.exec(spec);
  if (suffix) {
    const length = Number(suffix[1]);
    if (length === 0) return 'unsatisfiable';
    if (size === 0) return undefined;
    return { start: Math.max(0, size - length), end: size - 1 };
  }

  const intRange = /^(\d+)-(\d*)$/.exec(spec);
  if (!intRange) return undefined;
  const first = Number(intRange[1]);
  const last = intRange[2] === '' ? undefined : Number(intRange[2]);
  if (last !== undefined && last < first) return undefined; // invalid range-spec: ignore the header
  if (first >= size) return 'unsatisfiable';
  return { start: first, end: last === undefined ? size - 1 : Math.min(last, size - 1) };
}

/** The Content-Range value for a 206 (`bytes 0-99/1000`) or a 416 (`bytes * /1000`). */
export function contentRange(range: ParsedRange | 'unsatisfiable', size: number): string {
  return range === 'unsatisfiable' ? `bytes */${size}` : `bytes ${range.start}-${range.end}/${size}`;
}

const MAX_NAME_LENGTH = 255;

/**
 * A safe Content-Disposition value:
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded name>`.
 *
 * The name is cleaned first: control characters (C0, DEL, C1, line/paragraph separators,
 * bidi controls) are removed, path separators become `_`, surrounding whitespace is trimmed, an
 * empty result becomes `download`, and very long names are shortened (keeping the extension).
 * The fallback replaces non-ASCII (after stripping diacritics), `"`, `\` and `%` by `_`;
 * `filename*` is added whenever the fallback differs from the cleaned name.
 */
export function contentDisposition(fileName: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const disposition = type === 'inline' ? 'inline' : 'attachment';
  const name = cleanFileName(fileName);
  const fallback = asciiFallback(name);
  let header = `${disposition}; filename="${fallback}"`;
  if (fallback !== name) header += `; filename*=UTF-8''${encodeRfc5987(name)}`;
  return header;
}

function cleanFileName(input: unknown): string {
  let name = typeof input === 'string' ? input : input === undefined || input === null ? '' : String(input);
  name = name
    // lone surrogates cannot be encoded as UTF-8
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    // controls, line separators, bidi overrides/isolates, BOM / zero-width no-break space
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\ufeff]/g, '')
    .replace(/[/\\]/g, '_')
    .trim();
  if (name === '' || name === '.' || name === '..') name = 'download';
  const chars = Array.from(name);
  if (chars.length > MAX_NAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 ? Array.from(name.slice(dot)) : [];
    const keepExt = ext.length > 0 && ext.length <= 16 ? ext : [];
    name = chars.slice(0, MAX_NAME_LENGTH - keepExt.length).join('').trimEnd() + keepExt.join('');
  }
  return name;
}

function asciiFallback(name: string): string {
  const fallback = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // combining marks left by NFKD: é → e
    .replace(/[^\x20-\x7e]/gu, '_')
    .replace(/["\\%]/g, '_')
    .trim();
  return fallback === '' ? 'download' : fallback;
}

/** RFC 5987 value-chars: attr-char stays, everything else is %XX of its UTF-8 bytes. */
function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
