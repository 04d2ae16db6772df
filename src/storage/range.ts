/**
 * Download headers: a single byte range (RFC 9110 §14, parsed by `range-parser`), a safe
 * Content-Disposition (RFC 6266, written by `content-disposition`), and conditional requests (`fresh`).
 */
import { create as createContentDisposition } from 'content-disposition';
import fresh from 'fresh';
import rangeParser from 'range-parser';

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
 *   error, or several ranges that do not merge into one (multipart/byteranges is not offered).
 * - `'unsatisfiable'`: answer 416 with `Content-Range: bytes * /size`.
 * - `{start, end}`: answer 206 with `Content-Range: bytes start-end/size`.
 */
export function parseRange(header: string | undefined, size: number): ParsedRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const ranges = rangeParser(size, header, { combine: true });
  if (ranges === -2) return undefined;
  if (ranges === -1) return suffixLongerThan(header, size) ? { start: 0, end: size - 1 } : 'unsatisfiable';
  if (ranges.type.toLowerCase() !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0]!.start, end: ranges[0]!.end };
}

/**
 * `bytes=-N` with N > size means all of it (RFC 9110 §14.1.2); range-parser 1.3.0 answers -1 (fixed
 * upstream in jshttp/range-parser#66, not yet released).
 */
function suffixLongerThan(header: string, size: number): boolean {
  const suffix = /^bytes=\s*-(\d+)\s*$/i.exec(header);
  return suffix !== null && size > 0 && Number(suffix[1]) > size;
}

/** The Content-Range value for a 206 (`bytes 0-99/1000`) or a 416 (`bytes * /1000`). */
export function contentRange(range: ParsedRange | 'unsatisfiable', size: number): string {
  return range === 'unsatisfiable' ? `bytes */${size}` : `bytes ${range.start}-${range.end}/${size}`;
}

const MAX_NAME_LENGTH = 255;

/**
 * Content-Disposition with the stored name cleaned first (what the library leaves to its caller):
 * control characters (C0, DEL, C1, line/paragraph separators, bidi controls) removed, path
 * separators made `_`, lone surrogates replaced, an empty result named `download`, very long names
 * shortened keeping the extension. The library quotes, adds an ASCII fallback and `filename*`.
 */
export function contentDisposition(fileName: string, type: 'attachment' | 'inline' = 'attachment'): string {
  return createContentDisposition(cleanFileName(fileName), { type: type === 'inline' ? 'inline' : 'attachment' });
}

function cleanFileName(input: string): string {
  let name = String(input ?? '')
    // lone surrogates cannot be encoded as UTF-8
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\ufeff]/g, '')
    .replace(/[/\\]/g, '_')
    .trim();
  if (name === '' || name === '.' || name === '..') name = 'download';
  const chars = Array.from(name);
  if (chars.length > MAX_NAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 ? Array.from(name.slice(dot)) : [];
    const kept = extension.length > 0 && extension.length <= 16 ? extension : [];
    name = chars.slice(0, MAX_NAME_LENGTH - kept.length).join('').trimEnd() + kept.join('');
  }
  return name;
}

/**
 * Whether a request's preconditions fail, so that it is answered 412 (RFC 9110 §13.1.1, §13.1.4, in the
 * order of §13.2.2): If-Match, compared strongly (`*`, or a listed tag equal to `etag`; a `W/` tag never
 * matches), else If-Unmodified-Since against `lastModified` to the second (an unreadable date is ignored).
 */
export function preconditionFailed(ifMatch: string | undefined, ifUnmodifiedSince: string | undefined, etag: string, lastModified: Date): boolean {
  if (ifMatch) return ifMatch.trim() !== '*' && !ifMatch.split(',').some((tag) => tag.trim() === etag);
  if (!ifUnmodifiedSince) return false;
  const since = Date.parse(ifUnmodifiedSince);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) * 1000 > since;
}

/**
 * Whether a GET or HEAD may be answered 304 (RFC 9110 §13.1.2–3): If-None-Match against `etag` (a
 * list of tags, `W/` tags, `*`), If-Modified-Since against `lastModified`, as the `fresh` package
 * compares them. It is given the two conditions alone: `fresh` (and Koa's `ctx.fresh`) answer "stale"
 * to a request that says `Cache-Control: no-cache`, which fetch() adds to every conditional request.
 */
export function notModified(ifNoneMatch: string | undefined, ifModifiedSince: string | undefined, etag: string, lastModified: Date): boolean {
  return fresh({ 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince }, { etag, 'last-modified': lastModified.toUTCString() });
}
