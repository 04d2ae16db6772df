import { describe, expect, it } from 'vitest';
import { contentDisposition, contentRange, notModified, parseRange, preconditionFailed } from './range.js';

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', 1000, { start: 0, end: 99 }],
    ['bytes=100-', 1000, { start: 100, end: 999 }],
    ['bytes=-500', 1000, { start: 500, end: 999 }],
    ['bytes=-1', 1000, { start: 999, end: 999 }],
    ['bytes=0-0', 1000, { start: 0, end: 0 }],
    ['bytes=999-999', 1000, { start: 999, end: 999 }],
    // end beyond size is clamped
    ['bytes=500-5000', 1000, { start: 500, end: 999 }],
    ['bytes=0-99999999999999999999999', 1000, { start: 0, end: 999 }],
    // suffix longer than the representation: all of it
    ['bytes=-5000', 1000, { start: 0, end: 999 }],
    // case-insensitive unit, whitespace around positions
    ['Bytes=0-9', 1000, { start: 0, end: 9 }],
    ['bytes= 0-9 ', 1000, { start: 0, end: 9 }],
    ['bytes=1 - 2', 1000, { start: 1, end: 2 }],
    ['bytes=007-8', 1000, { start: 7, end: 8 }],
    // overlapping or adjacent ranges merge into one
    ['bytes=0-4,5-9', 1000, { start: 0, end: 9 }],
  ] as const)('%s of %i bytes → %j', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it.each([
    ['bytes=1000-', 1000],
    ['bytes=1000-2000', 1000],
    ['bytes=5000-', 1000],
    ['bytes=99999999999999999999999-', 1000],
    ['bytes=-0', 1000],
    ['bytes=0-', 0],
    ['bytes=0-0', 0],
    ['bytes=-10', 0],
    // last < first: an invalid range, and the only one
    ['bytes=5-2', 1000],
  ] as const)('%s of %i bytes → unsatisfiable (416)', (header, size) => {
    expect(parseRange(header, size)).toBe('unsatisfiable');
  });

  it.each([
    [undefined, 'no header'],
    ['', 'empty'],
    ['bytes=', 'no range'],
    ['bytes=,', 'only empty elements'],
    ['bytes=0-9,', 'an empty element'],
    ['bytes=0-1,5-6', 'several ranges: serve the full representation'],
    ['bytes=0-1, -5', 'several ranges (suffix)'],
    ['items=0-1', 'unknown unit'],
    ['bytes 0-1', 'no ='],
    ['bytes=abc', 'garbage'],
    ['bytes=-', 'empty suffix'],
    ['bytes=1.5-2', 'not an integer'],
    ['bytes=-5-', 'malformed'],
    ['bytes=+1-2', 'sign'],
    ['bytes=0x10-20', 'hex'],
  ])('%j → undefined (%s)', (header, _why) => {
    expect(parseRange(header, 1000)).toBeUndefined();
  });

  it('formats Content-Range', () => {
    expect(contentRange({ start: 0, end: 99 }, 1000)).toBe('bytes 0-99/1000');
    expect(contentRange('unsatisfiable', 1000)).toBe('bytes */1000');
  });
});

describe('contentDisposition', () => {
  it('plain ASCII names get only filename', () => {
    expect(contentDisposition('report.pdf', 'attachment')).toBe('attachment; filename=report.pdf');
    expect(contentDisposition('photo 1.png', 'inline')).toBe('inline; filename="photo 1.png"');
  });

  it('defaults to attachment and never emits another disposition type', () => {
    expect(contentDisposition('a.txt')).toBe('attachment; filename=a.txt');
    expect(contentDisposition('a.txt', 'evil; x=1' as 'inline')).toBe('attachment; filename=a.txt');
  });

  it('quotes and backslashes cannot break out of the quoted string', () => {
    const header = contentDisposition('my "quoted" \\ name.txt', 'attachment');
    // the backslash is a path separator (made `_`); the quotes are escaped inside the quoted string
    expect(header).toBe('attachment; filename="my \\"quoted\\" _ name.txt"');
  });

  it('non-ASCII names get an RFC 5987 filename* and an ASCII fallback', () => {
    expect(contentDisposition('Résumé.pdf', 'attachment')).toBe(
      `attachment; filename="R?sum?.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf`,
    );
    expect(contentDisposition('报告.docx', 'inline')).toBe(
      `inline; filename="??.docx"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.docx`,
    );
    expect(contentDisposition('😀.txt')).toBe(`attachment; filename="??.txt"; filename*=UTF-8''%F0%9F%98%80.txt`);
  });

  it('removes control characters (no header injection) and path separators', () => {
    const header = contentDisposition('evil\r\nSet-Cookie: a=b\u0000\u0007\u007f\u0085.txt', 'attachment');
    expect(header).not.toMatch(/[\r\n\u0000-\u001f\u007f]/);
    expect(header).toBe('attachment; filename="evilSet-Cookie: a=b.txt"');
    expect(contentDisposition('../../etc/passwd')).toBe('attachment; filename=.._.._etc_passwd');
    expect(contentDisposition('a\\b.txt')).toBe('attachment; filename=a_b.txt');
    expect(contentDisposition('\u202Egnp.exe')).toBe('attachment; filename=gnp.exe');
  });

  it('encodes characters outside attr-char in filename*', () => {
    const header = contentDisposition("it's (100%) *ok*é.txt");
    const star = /filename\*=UTF-8''(.*)$/.exec(header)![1]!;
    expect(star).toMatch(/^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
    expect(decodeURIComponent(star)).toBe("it's (100%) *ok*é.txt");
    expect(header).toContain(`filename="it's (100%) *ok*?.txt"`);
  });

  it('falls back to "download" for empty names and replaces lone surrogates', () => {
    expect(contentDisposition('')).toBe('attachment; filename=download');
    expect(contentDisposition('\r\n  ')).toBe('attachment; filename=download');
    expect(contentDisposition('..')).toBe('attachment; filename=download');
    expect(contentDisposition('a\uD800b.txt')).toBe(`attachment; filename="a?b.txt"; filename*=UTF-8''a%EF%BF%BDb.txt`);
  });

  it('shortens very long names and keeps the extension', () => {
    const header = contentDisposition(`${'a'.repeat(1000)}.pdf`);
    const name = /filename=([^;]*)/.exec(header)![1]!;
    expect(name.length).toBe(255);
    expect(name.endsWith('.pdf')).toBe(true);
  });
});

describe('notModified', () => {
  const etag = '"abc"';
  const modified = new Date('2026-11-23T06:00:00.500Z');
  it('compares If-None-Match weakly, in a list, and `*`', () => {
    for (const header of ['"abc"', 'W/"abc"', '"x", "abc"', ' "x" ,W/"abc" ', '*']) expect(notModified(header, undefined, etag, modified), header).toBe(true);
    for (const header of ['"abcd"', '"x"', 'abc', '"ab", "c"']) expect(notModified(header, undefined, etag, modified), header).toBe(false);
  });
  it('reads If-Modified-Since only without If-None-Match, to the second', () => {
    expect(notModified(undefined, 'Mon, 23 Nov 2026 06:00:00 GMT', etag, modified)).toBe(true);
    expect(notModified(undefined, 'Mon, 23 Nov 2026 05:59:59 GMT', etag, modified)).toBe(false);
    expect(notModified(undefined, 'not a date', etag, modified)).toBe(false);
    expect(notModified('"x"', 'Mon, 23 Nov 2026 07:00:00 GMT', etag, modified)).toBe(false);
  });
});

describe('preconditionFailed', () => {
  const etag = '"abc"';
  const modified = new Date('2026-11-23T06:00:00.500Z');
  it('compares If-Match strongly, in a list, and `*`', () => {
    for (const header of ['"abc"', '"x", "abc"', ' "x" ,"abc" ', '*']) expect(preconditionFailed(header, undefined, etag, modified), header).toBe(false);
    for (const header of ['W/"abc"', '"abcd"', '"x"', 'abc']) expect(preconditionFailed(header, undefined, etag, modified), header).toBe(true);
  });
  it('reads If-Unmodified-Since only without If-Match, to the second; an unreadable date is ignored', () => {
    expect(preconditionFailed(undefined, 'Mon, 23 Nov 2026 06:00:00 GMT', etag, modified)).toBe(false);
    expect(preconditionFailed(undefined, 'Mon, 23 Nov 2026 05:59:59 GMT', etag, modified)).toBe(true);
    expect(preconditionFailed(undefined, 'not a date', etag, modified)).toBe(false);
    expect(preconditionFailed('"abc"', 'Mon, 23 Nov 2026 05:59:59 GMT', etag, modified)).toBe(false);
    expect(preconditionFailed(undefined, undefined, etag, modified)).toBe(false);
  });
});
