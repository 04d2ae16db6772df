import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessText, markupText, storableText, textKindOf } from './extract.js';

// The in-process readers alone (no database): odd and hostile input must give text or nothing, never throw.
describe('in-process text extraction', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'extract-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells the kind by media type, extension, and a PDF by its first bytes whatever it is called', () => {
    const none = Buffer.alloc(0);
    expect(textKindOf('application/octet-stream', 'report.bin', Buffer.from('junk%PDF-1.7'))).toBe('pdf');
    expect(textKindOf('text/html; charset=utf-8', 'a', none)).toBe('html');
    expect(textKindOf('application/atom+xml', 'a', none)).toBe('xml');
    expect(textKindOf('application/octet-stream', 'notes.MD', none)).toBe('plain');
    expect(textKindOf('application/octet-stream', 'a.docx', none)).toBe('docx');
    expect(textKindOf('image/png', 'a.png', none)).toBeUndefined();
  });

  it('drops tags, comments, script and style; decodes entities (every named one of HTML), and bad code points become spaces', () => {
    const html = '<html><script>var hidden = 1</script><style>p{}</style><!-- gone --><p>fish &amp; chips &#x41;&#66;</p>&unknown; &#0; &#x110000;</html>';
    const text = storableText(markupText(html, 'html')).replace(/\s+/g, ' ').trim();
    expect(text).toBe('fish & chips AB &unknown;');
    expect(markupText('<p>caf&eacute; na&iuml;ve &euro;5 &hellip;</p>', 'html').trim()).toBe('café naïve €5 …');
    // XML names five entities only
    expect(markupText('<a>&lt;b&gt; &eacute;</a>', 'xml')).toBe(' <b> &eacute; ');
    expect(markupText('<p>if 1 < 2 and 3 > 2 then</p>', 'html').replace(/\s+/g, ' ').trim()).toBe('if 1 < 2 and 3 > 2 then');
    // CDATA's content is text, and the markup it carries (HTML in a feed) is stripped like the rest
    expect(markupText('<a><![CDATA[<p>kept</p>]]></a>', 'xml').trim()).toBe('kept');
  });

  it('keeps at most maxChars, reads only the head of a large file, and marks the text truncated', async () => {
    const file = path.join(dir, 'large.txt');
    await writeFile(file, 'word '.repeat(10_000));
    const { text, truncated } = await inProcessText(file, 'plain', 100);
    expect(text).toHaveLength(100);
    expect(truncated).toBe(true);
    const small = path.join(dir, 'small.txt');
    await writeFile(small, 'short');
    expect(await inProcessText(small, 'plain', 100)).toEqual({ text: 'short', truncated: false });
  });

  it('drops a UTF-8 byte order mark, which would stick to the first word', async () => {
    const file = path.join(dir, 'bom.txt');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bomword rest')]));
    expect(await inProcessText(file, 'plain', 100)).toEqual({ text: 'bomword rest', truncated: false });
  });

  it('a missing file is an error for the job to report, not a silent empty text', async () => {
    await expect(inProcessText(path.join(dir, 'gone.txt'), 'plain', 100)).rejects.toThrow();
  });

  it('storable text holds no NUL or other control characters but keeps tabs and newlines', () => {
    expect(storableText('a\u0000b\u0007c\td\ne')).toBe('a b c\td\ne');
    // NFC, as searches are; what could not be decoded (U+FFFD) is no word
    expect(storableText('cafe\u0301 x\ufffdy')).toBe('caf\u00e9 x y');
  });
});
