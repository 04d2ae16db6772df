/**
 * Runs every benchmark in sequence, each in its own `node dist/bench/<name>.js` process (clean memory,
 * its own service), printing their output as it comes. Exits 1 when any of them failed; a missed
 * target is printed by the benchmark, not a failure.
 *
 *   npm run bench        (= npm run build && node dist/bench/run-all.js)
 *   node dist/bench/run-all.js [name…]   only these (gateway-overhead, transfer, ingest, search, conversion, statistics, acl, audit, ocr, corpus-text, corpus)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const all = ['gateway-overhead', 'transfer', 'ingest', 'search', 'conversion', 'statistics', 'acl', 'audit', 'ocr', 'corpus-text', 'corpus'];
/** benchmarks that may run longer than LIMIT_MS, with their own limit (their watchdog, bench/lib.ts runBench, stops them before) */
const longer: Record<string, number> = { corpus: 45 * 60_000 };
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all;
const unknown = chosen.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')} (known: ${all.join(', ')})`);
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
/** each benchmark stops itself well before this; past it, it is stopped */
const LIMIT_MS = 20 * 60_000;

const results: { name: string; code: number | string; seconds: number }[] = [];
for (const name of chosen) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(here, `${name}.js`)], { stdio: 'inherit' });
  const timer = setTimeout(() => child.kill('SIGTERM'), longer[name] ?? LIMIT_MS);
  const forward = () => child.kill('SIGTERM');
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  const code = await new Promise<number | string>((resolve) => child.once('exit', (c, signal) => resolve(c ?? signal ?? 'unknown')));
  clearTimeout(timer);
  process.off('SIGINT', forward);
  process.off('SIGTERM', forward);
  results.push({ name, code, seconds: (performance.now() - t0) / 1000 });
  if (chosen.length > 1) console.log('');
}

// one benchmark ends with its own `<name>: … (targets: …)` line; several get a summary after them
if (results.length > 1) {
  console.log('# summary');
  for (const r of results) console.log(`${r.name.padEnd(18)} ${r.code === 0 ? 'ran' : `FAILED (${r.code})`} in ${r.seconds.toFixed(0)} s`);
} else if (results[0]!.code !== 0) console.error(`${results[0]!.name} FAILED (${results[0]!.code})`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
