/**
 * Summarises V8 .cpuprofile files (from `node --cpu-prof`, see BENCH_CPU_PROF in lib.ts): the frames
 * with the most self time, and the packages / project folders the time goes to.
 *
 *   node dist/bench/profile-top.js <file.cpuprofile>… [--top N]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 25;

function area(url: string): string {
  if (!url) return '(native/vm)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node core';
  const own = /\/dist\/((?:src|rest-compat)\/[^/]+(?:\/[^/]+)?)/.exec(url);
  return own ? own[1]! : url;
}

for (const file of args) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((s, v) => s + v, 0);
  const idle = [...self.entries()].filter(([id]) => ['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName)).reduce((s, [, v]) => s + v, 0);
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}`;
    frames.set(key, (frames.get(key) ?? 0) + us);
    areas.set(area(url), (areas.get(area(url)) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${pct(idle)} idle/program`);
  console.log('top self time:');
  for (const [key, us] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${key}`);
  console.log('by package / folder:');
  for (const [key, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(us)}  ${key}`);
}
