/**
 * OCR benchmark (DESIGN §12): a scanned 10-page PDF (pages of known text drawn at 200 dpi, no text
 * layer) read by the service's extraction process (warm: its recognizer loaded, as in a running worker)
 * against the `tesseract` command on the same page images, one thread (OMP_THREAD_LIMIT=1: the
 * target is per core). Character accuracy: 1 − edit distance ÷ length, whitespace folded, over the
 * text the pages were drawn from.
 *
 *   npm run bench -- ocr
 *
 * Targets: the service ≥ 0.5× tesseract's pages/s; accuracy ≥ 95 %. When `tesseract` is missing it is
 * installed (`apt-get install tesseract-ocr`, as root) or the comparison is skipped with the reason.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import { extractionPool, textExtractor } from '../workers/extract/extract-process.js';
import { scannedPage, scannedPdf } from '../test/helpers/scans.js';
import { fmt, header, makeTempDir, removeDir, runBench, targetsLine } from './lib.js';

const PAGES = 10;
const DPI = 200;
const words = ['invoice', 'delivery', 'amount', 'customer', 'warehouse', 'shipment', 'payment', 'contract', 'quarterly', 'balance', 'account', 'schedule', 'received', 'signature', 'reference', 'order'];

/** Deterministic lines of words and numbers: the text every page is drawn from. */
function pageLines(page: number): string[] {
  let seed = page * 7919;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: 30 }, (_, line) => {
    const parts = Array.from({ length: 6 }, () => words[next() % words.length]!);
    return `${line + 1}. ${parts.join(' ')} ${next() % 10000}`;
  });
}

const folded = (text: string) => text.replace(/\s+/g, ' ').trim();
const accuracyOf = (expected: string, read: string) => 1 - distance(folded(expected), folded(read)) / folded(expected).length;

function tesseractCommand(): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v tesseract']).status === 0) return undefined;
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return 'tesseract not installed (apt-get install tesseract-ocr, as root)';
  console.log('installing tesseract-ocr (apt-get) for the comparison…');
  const installed = spawnSync('sh', ['-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q tesseract-ocr >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tesseract-ocr >/dev/null 2>&1)']);
  return installed.status === 0 ? undefined : 'tesseract could not be installed (apt-get install tesseract-ocr failed)';
}

await runBench(async (cleanup) => {
  header('OCR: a scanned 10-page PDF, the service against tesseract');
  const dir = makeTempDir('ocr');
  cleanup(() => removeDir(dir));
  const texts = Array.from({ length: PAGES }, (_, index) => pageLines(index + 1));
  const pdfPath = path.join(dir, 'scan.pdf');
  await fs.writeFile(pdfPath, await scannedPdf(texts, DPI));
  const pngs: string[] = [];
  for (const [index, lines] of texts.entries()) {
    const png = path.join(dir, `page-${index + 1}.png`);
    await fs.writeFile(png, await scannedPage(lines, DPI));
    pngs.push(png);
  }

  // the service's default bounds (FULLTEXT_EXTRACT_MEMORY_MB, OCR_PAGE_TIMEOUT_MS)
  const pool = extractionPool(1024, 1);
  cleanup(() => pool.close());
  const extractor = textExtractor(pool, 600_000);
  const request = { inputPath: pdfPath, fileName: 'scan.pdf', kind: 'pdf' as const, maxChars: 200_000, ocr: { languages: ['eng'], pageTimeoutMs: 30_000, dpi: DPI, stopBy: Number.MAX_SAFE_INTEGER } };
  // warm: the process started and its recognizer loaded by a first page
  const one = path.join(dir, 'one.pdf');
  await fs.writeFile(one, await scannedPdf([texts[0]!], DPI));
  await extractor.extract({ ...request, inputPath: one });
  const started = performance.now();
  const read = await extractor.extract(request);
  const ownSeconds = (performance.now() - started) / 1000;
  const ownPagesPerSecond = PAGES / ownSeconds;
  const accuracy = accuracyOf(texts.flat().join(' '), read?.text ?? '');
  console.log(`service  ${fmt(ownPagesPerSecond, 2)} pages/s (${fmt(ownSeconds, 1)} s for ${PAGES} pages), character accuracy ${fmt(accuracy * 100, 2)} %, notes: ${read?.notes.length ?? 0}`);

  const missed: string[] = [];
  if (accuracy < 0.95) missed.push('accuracy ≥ 95 %');
  let versus = 'tesseract not measured';
  const unavailable = tesseractCommand();
  if (unavailable) {
    console.log(`tesseract: skipped — ${unavailable}`);
    missed.push('≥ 0.5× tesseract (not measured)');
  } else {
    const peerStarted = performance.now();
    let peerText = '';
    for (const png of pngs) {
      const run = spawnSync('tesseract', [png, 'stdout', '-l', 'eng'], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`tesseract failed: ${run.stderr}`);
      peerText += `${run.stdout} `;
    }
    const peerPagesPerSecond = PAGES / ((performance.now() - peerStarted) / 1000);
    const times = ownPagesPerSecond / peerPagesPerSecond;
    console.log(`tesseract ${fmt(peerPagesPerSecond, 2)} pages/s (one thread), character accuracy ${fmt(accuracyOf(texts.flat().join(' '), peerText) * 100, 2)} %`);
    versus = `${fmt(times, 2)}× tesseract`;
    if (times < 0.5) missed.push('≥ 0.5× tesseract');
  }
  console.log(targetsLine('ocr', `${fmt(ownPagesPerSecond, 2)} pages/s, ${versus}, accuracy ${fmt(accuracy * 100, 2)} %`, missed));
});
