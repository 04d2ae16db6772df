/**
 * Text as a reader sees it (issue 29): the share of real-world PDFs (`../shared/corpus/`, from the
 * pdf.js test suite) that full text finds by a rare word of their first page, poppler's `pdftotext`
 * being the reference of what a reader sees. For each PDF the word of its first page (as pdftotext
 * reads it: letters only, 4 or more) that the fewest other first pages hold is searched in the text the
 * extraction process keeps (OCR off: pdftotext reads no scans), as Postgres's index reads it
 * (`to_tsvector('simple', text) @@ to_tsquery(word)`, the generated `document`).
 *
 *   npm run bench -- corpus-text            (CORPUS_DIR=… for another folder of PDFs)
 *
 * Target: ≥ 95 % of the PDFs that have such a word. pdftotext is installed when missing
 * (`apt-get install poppler-utils`, as root), else the run says why it cannot measure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { createLogger } from '../src/logger.js';
import { projectRoot } from '../src/paths.js';
import { extractionPool, textExtractor } from '../workers/extract/extract-process.js';
import { fmt, header, makeTempDir, removeDir, runBench, targetsLine } from './lib.js';

const corpus = process.env.CORPUS_DIR ?? path.resolve(projectRoot, '../shared/corpus');

function pdftotextMissing(): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v pdftotext']).status === 0) return undefined;
  if (process.getuid?.() !== 0) return 'pdftotext not installed (apt-get install poppler-utils, as root)';
  const installed = spawnSync('sh', ['-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q poppler-utils >/dev/null 2>&1']);
  return installed.status === 0 ? undefined : 'pdftotext could not be installed';
}

/**
 * The words a reader would type: pdftotext's text folded as a keyboard writes it (NFKC: the ﬀ ligature
 * as ff, µ as μ), taken as Postgres's parser takes words (runs of letters and digits), of 4 or more
 * letters, within one script (a page's `あabstract` is two words to a reader).
 */
const wordsOf = (text: string) =>
  new Set(
    (text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [])
      .flatMap((run) => run.match(/\p{Script=Latin}[\p{Script=Latin}\p{N}]*|\p{Script=Greek}[\p{Script=Greek}\p{N}]*|\p{Script=Cyrillic}[\p{Script=Cyrillic}\p{N}]*|[^\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]+/gu) ?? [])
      .filter((word) => (word.match(/\p{L}/gu)?.length ?? 0) >= 4 && word.length <= 40),
  );

await runBench(async (cleanup) => {
  header(`Text as a reader sees it: PDFs of ${corpus} found by a rare word of their first page`);
  const missing = pdftotextMissing();
  if (missing) {
    console.log(targetsLine('corpus-text', 'not measured', [`≥ 95 % (${missing})`]));
    return;
  }
  const files = (await fs.readdir(corpus)).filter((name) => name.toLowerCase().endsWith('.pdf')).sort();
  const firstPages = new Map<string, Set<string>>();
  for (const file of files) {
    const read = spawnSync('pdftotext', ['-l', '1', '-enc', 'UTF-8', path.join(corpus, file), '-'], { encoding: 'utf8', timeout: 60_000 });
    if (read.status === 0) firstPages.set(file, wordsOf(read.stdout));
  }
  const frequency = new Map<string, number>();
  for (const words of firstPages.values()) for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const rareWord = (words: Set<string>) => [...words].sort((a, b) => frequency.get(a)! - frequency.get(b)! || b.length - a.length || a.localeCompare(b))[0];

  const dir = makeTempDir('corpus-text');
  cleanup(() => removeDir(dir));
  const logger = createLogger('warn');
  const postgres = await startEmbeddedPostgres({ directory: path.join(dir, 'pg'), logger });
  cleanup(() => postgres.stop());
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  cleanup(() => client.end());
  // the service's default bounds (FULLTEXT_EXTRACT_MEMORY_MB, FULLTEXT_EXTRACT_TIMEOUT_MS)
  const pool = extractionPool(1024, 1);
  cleanup(() => pool.close());
  const extractor = textExtractor(pool, 60_000);

  let measured = 0;
  const notFound: string[] = [];
  for (const [file, words] of firstPages) {
    const word = rareWord(words);
    if (!word) continue;
    measured++;
    const text = await extractor
      .extract({ inputPath: path.join(corpus, file), fileName: file, kind: 'pdf', maxChars: 200_000, ocr: null })
      .then((extracted) => extracted?.text ?? '')
      .catch(() => '');
    const { rows } = await client.query<{ found: boolean }>(`select to_tsvector('simple', $1) @@ to_tsquery('simple', quote_literal($2)) as found`, [text, word]);
    if (!rows[0]!.found) notFound.push(`${file} (${word})`);
  }
  const share = (measured - notFound.length) / measured;
  console.log(`${files.length} PDFs, ${measured} with a first-page word pdftotext reads; found ${measured - notFound.length}`);
  if (notFound.length > 0) console.log(`not found: ${notFound.join(', ')}`);
  console.log(targetsLine('corpus-text', `${fmt(share * 100, 1)} % found (${measured - notFound.length} of ${measured})`, share >= 0.95 ? [] : ['≥ 95 % found']));
});
