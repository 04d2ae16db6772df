import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPdfMark, longestTokenRun, markupText, pdfMarkBytes, plainOrMarkupText, storableText, textKindOf } from './extract.js';

// The readers of the extraction process alone (no database): odd and hostile input must give text or nothing, never throw.
describe('text extraction', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'extract-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells the kind by media type, extension, and a PDF by its first bytes whatever it is called', () => {
    expect(hasPdfMark(Buffer.from('junk%PDF-1.7'))).toBe(true);
    // only the first pdfMarkBytes count
    expect(hasPdfMark(Buffer.concat([Buffer.alloc(pdfMarkBytes - 4), Buffer.from('%PDF-1.7')]))).toBe(false);
    expect(hasPdfMark(Buffer.alloc(0))).toBe(false);
    expect(textKindOf('application/octet-stream', 'report.bin', true)).toBe('pdf');
    expect(textKindOf('application/octet-stream', 'report.bin', false)).toBeUndefined();
    expect(textKindOf('text/html; charset=utf-8', 'a', false)).toBe('html');
    expect(textKindOf('application/atom+xml', 'a', false)).toBe('xml');
    expect(textKindOf('application/octet-stream', 'notes.MD', false)).toBe('plain');
    expect(textKindOf('application/octet-stream', 'a.docx', false)).toBe('docx');
    expect(textKindOf('image/png', 'a.png', false)).toBe('image');
    expect(textKindOf('application/octet-stream', 'scan.TIFF', false)).toBe('image');
    expect(textKindOf('image/gif', 'a.gif', false)).toBeUndefined();
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
    // script and style of HTML hold code; an XML element of that name holds text; words on each side of a tag stay apart
    expect(markupText('<p>one</p><script type="x">if (a < b) c()</script><p>two<br/>three</p>', 'html').replace(/\s+/g, ' ').trim()).toBe('one two three');
    expect(markupText('<doc><script>kept in xml</script></doc>', 'xml').trim()).toBe('kept in xml');
  });

  // 64 KB of `<!--` took 3.4 s with the regular expressions used before (quadratic: 1 MB would take about 15 minutes)
  it('reads hostile markup in linear time: 64 KB and 1 MB of each within a generous bound', () => {
    const hostile: Record<string, string> = {
      'tags never closed': '<a',
      'comments never closed': '<!--',
      'CDATA never closed': '<![CDATA[',
      'script tags never closed': '<script',
      'a script never ended': '</scrip',
      'attributes never closed': '<a b="',
      'nested elements': '<b><i>',
      'end tags of nothing open': '</span>',
      'processing instructions': '<?x',
      'declarations': '<!x',
      'entities': '&amp',
    };
    for (const [what, unit] of Object.entries(hostile)) {
      for (const bytes of [64 * 1024, 1024 * 1024]) {
        const source = (what === 'a script never ended' ? '<script>' : '') + unit.repeat(Math.ceil(bytes / unit.length));
        for (const kind of ['html', 'xml'] as const) {
          const started = performance.now();
          markupText(`<p>needle</p>${source}`, kind);
          const took = performance.now() - started;
          // about 0.1 s for 1 MB here; the bound leaves room for a loaded machine
          expect(took, `${what}, ${bytes} bytes as ${kind}: ${Math.round(took)} ms`).toBeLessThan(bytes > 64 * 1024 ? 4_000 : 1_000);
        }
      }
      // what comes before the hostile part is read
      expect(markupText(`<p>needle</p>${unit.repeat(1000)}`, 'html')).toContain('needle');
    }
  });

  it('CDATA nested in CDATA is read twice at most, not once per level', () => {
    const nested = `<doc><![CDATA[${'<![CDATA['.repeat(100_000)}x]]>after</doc>`;
    const started = performance.now();
    expect(markupText(nested, 'xml').trim()).toBe('after');
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('keeps at most maxChars, reads only the head of a large file, and marks the text truncated', async () => {
    const file = path.join(dir, 'large.txt');
    await writeFile(file, 'word '.repeat(10_000));
    const { text, truncated } = await plainOrMarkupText(file, 'plain', 100);
    expect(text).toHaveLength(100);
    expect(truncated).toBe(true);
    const small = path.join(dir, 'small.txt');
    await writeFile(small, 'short');
    expect(await plainOrMarkupText(small, 'plain', 100)).toEqual({ text: 'short', truncated: false });
  });

  it('drops a UTF-8 byte order mark, which would stick to the first word', async () => {
    const file = path.join(dir, 'bom.txt');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bomword rest')]));
    expect(await plainOrMarkupText(file, 'plain', 100)).toEqual({ text: 'bomword rest', truncated: false });
  });

  it('a missing file is an error for the job to report, not a silent empty text', async () => {
    await expect(plainOrMarkupText(path.join(dir, 'gone.txt'), 'plain', 100)).rejects.toThrow();
  });

  it('storable text holds no NUL or other control characters but keeps tabs and newlines', () => {
    expect(storableText('a\u0000b\u0007c\td\ne')).toBe('a b c\td\ne');
    // NFKC (so NFC too), as searches are; what could not be decoded (U+FFFD) is no word
    expect(storableText('cafe\u0301 x\ufffdy')).toBe('caf\u00e9 x y');
  });

  it('storable text holds nothing Postgres parses in quadratic time: no `<`, and long runs of non-blank characters keep their words only', () => {
    expect(storableText('if 1 < 2 <!-- no comment --> <b>bold</b>')).toBe('if 1   2  !-- no comment -->  b>bold /b>');
    // URLs, paths, addresses and names up to the limit stay whole (the parser still reads them as one
    // token), followed by their words: found whole and by their parts (issue 29, text as a reader sees it)
    const url = `https://example.com/${'a'.repeat(longestTokenRun - 'https://example.com/'.length)}`;
    expect(url).toHaveLength(longestTokenRun);
    const kept = { [url]: `https example com ${'a'.repeat(longestTokenRun - 20)}`, snake_case_name: 'snake case name', 'user@example.org': 'user example org', '/usr/local/bin': 'usr local bin', 'v1.2.3': 'v1 2 3', 'invoice-2024.pdf': 'invoice 2024 pdf', 'l\u2019impay\u00e9': 'l impay\u00e9' };
    for (const [whole, parts] of Object.entries(kept)) expect(storableText(`see ${whole} here`)).toBe(`see ${whole} ${parts} here`);
    // a hyphenated word is split by the parser itself, and ASCII it splits at joins nothing
    for (const plain of ['well-known', 'a,b', 'x;y', '(word)']) expect(storableText(plain)).toBe(plain);
    // compatibility forms as a keyboard types them (NFKC)
    expect(storableText('di\ufb00erent \uff21\uff22')).toBe('different AB');
    // a longer run: its punctuation becomes spaces, its letters (any script, with their marks) and digits stay
    expect(storableText(`${url}x`)).toBe(`https example com ${'a'.repeat(longestTokenRun - 20)}x`);
    expect(storableText(`x ${'a_'.repeat(100)}é_日本_42 y`)).toBe(`x ${'a '.repeat(100)}é 日本 42 y`);
  });
});
