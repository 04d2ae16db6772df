/**
 * Shared pieces of the benchmarks: temp dirs, a service in a child process, login, RSS / CPU samples
 * from /proc, and printing. Everything listens on 127.0.0.1 only.
 */
// first: the service modules it loads carry decorators that need the metadata API at import time
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { handleSignalsInstead } from '../src/db/embedded-postgres.js';
import { freePort } from '../src/net.js';
import { projectRoot } from '../src/paths.js';
import { startServiceProcess } from '../test/helpers/process.js';

export const ADMIN_PASSWORD = 'bench-admin-password';
export const REPOSITORY = 'default';

/** A fresh temp dir readable by the `postgres` user (embedded Postgres runs as it when we are root). */
/** Synchronous, so that the caller registers its removal before a signal can stop the benchmark in between. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `crs-bench-${prefix}-`));
  chmodSync(dir, 0o755);
  return dir;
}

export async function removeDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

export type { ServiceProcess as ServiceChild } from '../test/helpers/process.js';

/** `node --expose-gc dist/app/main.js` on a free loopback port over `dataDir`, once it answers /readyz. */
export async function startServiceChild(dataDir: string, env: Record<string, string> = {}, timeoutMs = 90_000) {
  const port = await freePort();
  return startServiceProcess(
    { PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD, LOG_LEVEL: 'warn', ...env },
    { timeoutMs, nodeArgs: profileArgs() },
  );
}

/**
 * BENCH_CPU_PROF=<dir>: the server processes run with `--cpu-prof` and leave their profiles there
 * (summarise with `node dist/bench/profile-top.js <dir>/*.cpuprofile`). BENCH_NODE_ARGS: more node/V8
 * flags for them, space-separated (`--max-semi-space-size=4`): GC settings are compared this way
 * (docs/benchmarks.md, "search — what the scavenges keep").
 */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  const more = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  return [...(dir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(dir)}`] : []), ...more];
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function login(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/authenticate?user=admin&password=${encodeURIComponent(ADMIN_PASSWORD)}`, { method: 'POST' });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as string;
}

export const contentBase = (baseUrl: string) => `${baseUrl}/api/v1/access.svc.content.${REPOSITORY}/v1`;

export async function createFolder(baseUrl: string, session: string, name: string): Promise<string> {
  const response = await fetch(`${contentBase(baseUrl)}/folder?sessionId=${session}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  const text = await response.text();
  if (response.status !== 201 && response.status !== 200) throw new Error(`create folder: ${response.status} ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** VmRSS (or another kB field of /proc/<pid>/status, e.g. RssAnon) of a process in bytes; 0 when it is gone. */
export function rssOf(pid: number, field = 'VmRSS'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** user + system CPU seconds a process (or one thread: `<pid>/task/<tid>`) has used so far (from its /proc stat). */
export function cpuSecondsOf(pid: number | string): number {
  const { user, system } = cpuTimesOf(pid);
  return user + system;
}

/** user and system CPU seconds of a process (all its threads), or of one thread (`<pid>/task/<tid>`), so far. */
export function cpuTimesOf(pid: number | string): { user: number; system: number } {
  const fields = statFields(pid);
  // fields[11] = utime, fields[12] = stime, in clock ticks (100 a second)
  return fields ? { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 } : { user: 0, system: 0 };
}

/**
 * The fields of /proc/<pid>/stat after the command's name (which may hold spaces and parentheses):
 * [0] is the state (field 3 of proc(5)), [1] the parent's pid, [11] utime, [12] stime, [13] cutime,
 * [14] cstime. Undefined when the process is gone.
 */
export function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time and time spent runnable but waiting for a CPU (ms), summed over the threads of `pids`, from
 * the scheduler's own accounting (/proc/<pid>/task/<tid>/schedstat, nanoseconds): on a shared machine
 * the wait tells a slow request that was starved of a CPU from one that worked longer. Threads that
 * ended meanwhile are missed (the search benchmark adds the postmaster's reaped children apart).
 */
export function schedOf(pids: readonly number[]): { cpuMs: number; waitMs: number; mainWaitMs: number } {
  let cpuNs = 0;
  let waitNs = 0;
  let mainWaitNs = 0;
  for (const pid of pids) {
    for (const tid of readdirSafe(`/proc/${pid}/task`)) {
      const times = threadSched(pid, tid);
      if (!times) continue;
      cpuNs += times.cpuNs;
      waitNs += times.waitNs;
      // the main thread (tid = pid): a process's other threads (V8's GC helpers, libuv's pool) wait beside it, their waits overlapping
      if (tid === String(pid)) mainWaitNs += times.waitNs;
    }
  }
  return { cpuMs: cpuNs / 1e6, waitMs: waitNs / 1e6, mainWaitMs: mainWaitNs / 1e6 };
}

/** A thread's scheduler CPU and wait so far (ns; /proc/<pid>/task/<tid>/schedstat), undefined once it is gone. */
function threadSched(pid: number | string, tid: string): { cpuNs: number; waitNs: number } | undefined {
  try {
    const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
    return { cpuNs: Number(cpu), waitNs: Number(wait) };
  } catch {
    return undefined;
  }
}

/** The machine's busy CPU time so far, every CPU summed (ms; /proc/stat, clock ticks of 10 ms: read over many samples). */
export function machineBusyMs(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) * 10;
}

/** CPU ms of the children a process has reaped (cutime + cstime of /proc/<pid>/stat): Postgres' parallel workers that came and went. */
export function reapedChildrenCpuMs(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[13]) + Number(fields[14])) * 1000) / 100 : 0;
}

/** A process's command line, its arguments joined by spaces ('' when it is gone). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * Whether a Postgres process serves a client connection, by the title Postgres gives it ("postgres:
 * <user> <database> <client> <state>", the client `[local]` or `host(port)`); the others are its own
 * (postmaster, checkpointer, writers, autovacuum, I/O workers).
 */
export const isClientBackend = (pid: number) => /^postgres: \S+ \S+ (\[local\]|\S+\(\d+\))/.test(commandOf(pid));

/** The process and all its descendants (the service's embedded Postgres backends are its children). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (!fields) continue; // gone meanwhile
    const parent = Number(fields[1]);
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    all.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return all;
}

/** Every thread of the machine: its process, names, and scheduler CPU and wait (ns) so far (/proc/<pid>/task/<tid>). */
export interface ThreadTimes {
  pid: number;
  process: string;
  thread: string;
  cpuNs: number;
  waitNs: number;
}

export function machineThreads(): Map<number, ThreadTimes> {
  const threads = new Map<number, ThreadTimes>();
  for (const pid of readdirSafe('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let process = '';
    try {
      process = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      // Postgres names each process's role in its command line ("postgres: autovacuum worker …")
      if (process === 'postgres') process = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.replace(/^postgres: /, 'pg ').slice(0, 40);
    } catch {
      continue; // gone meanwhile
    }
    for (const tid of readdirSafe(`/proc/${pid}/task`)) {
      const times = threadSched(pid, tid);
      if (!times) continue;
      let thread = '';
      try {
        thread = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      } catch {
        continue; // gone meanwhile
      }
      threads.set(Number(tid), { pid: Number(pid), process, thread, ...times });
    }
  }
  return threads;
}

/** The threads that ran or waited between two snapshots (ms), the busiest first; a thread born meanwhile counts from zero. */
export function threadsBetween(before: Map<number, ThreadTimes>, after: Map<number, ThreadTimes>): (ThreadTimes & { tid: number; cpuMs: number; waitMs: number })[] {
  const changed = [];
  for (const [tid, t] of after) {
    const b = before.get(tid);
    const cpuMs = (t.cpuNs - (b?.cpuNs ?? 0)) / 1e6;
    const waitMs = (t.waitNs - (b?.waitNs ?? 0)) / 1e6;
    if (cpuMs > 0 || waitMs > 0) changed.push({ ...t, tid, cpuMs, waitMs });
  }
  return changed.sort((a, b) => b.cpuMs + b.waitMs - (a.cpuMs + a.waitMs));
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Samples a process's VmRSS (and RssAnon) every `everyMs`; peaks since the last `reset`. */
export class RssSampler {
  private timer: NodeJS.Timeout;
  baseline = 0;
  peak = 0;
  anonBaseline = 0;
  anonPeak = 0;
  constructor(
    private readonly pid: number,
    everyMs = 100,
  ) {
    this.reset();
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, rssOf(this.pid));
      this.anonPeak = Math.max(this.anonPeak, rssOf(this.pid, 'RssAnon'));
    }, everyMs);
  }
  reset(): void {
    this.baseline = this.peak = rssOf(this.pid);
    this.anonBaseline = this.anonPeak = rssOf(this.pid, 'RssAnon');
  }
  /** peak VmRSS − VmRSS at the last reset */
  get growth(): number {
    return this.peak - this.baseline;
  }
  get anonGrowth(): number {
    return this.anonPeak - this.anonBaseline;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

export const MiB = 1024 * 1024;
export const fmt = (n: number, digits = 1) => n.toFixed(digits);
export const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
export const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
/** The p-th percentile of ascending `sorted` (nearest rank). */
export const percentile = <T>(sorted: readonly T[], p: number): T => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** The last line of a benchmark: `<name>: <figures> (targets: MET)` or `(targets: MISSED: <which>)`. */
export function targetsLine(name: string, figures: string, missed: string[]): string {
  return `${name}: ${figures} (targets: ${missed.length === 0 ? 'MET' : `MISSED: ${missed.join(', ')}`})`;
}

export function header(title: string): void {
  const cpus = os.cpus();
  console.log(`# ${title}`);
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${fmt(os.totalmem() / 1024 ** 3, 0)} GiB RAM, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${new Date().toISOString()}`,
  );
}

/**
 * The benchmarks measure the service on the Node that `npm start` runs (the npm `node` package in
 * node_modules; the machine's own may be older and slower: ingest ≈ 280/s on Node 20 where Node 24
 * does ≈ 360/s). Started with another Node (`node dist/bench/….js` from a shell), a benchmark runs
 * itself again under that one and ends with its exit code.
 */
async function runUnderProjectNode(onSignal: () => void): Promise<void> {
  const projectNode = path.join(projectRoot, 'node_modules/.bin/node');
  if (!existsSync(projectNode)) return;
  const node = realpathSync(projectNode);
  if (realpathSync(process.execPath) === node) return;
  console.log(`(this is node ${process.version}; running again under the project's ${node})`);
  const copy = spawn(node, process.argv.slice(1), { stdio: 'inherit' });
  // a signal sent to this process (run-all's SIGTERM, a time limit) reaches the copy doing the work, which
  // then stops its service and database; blocked in spawnSync, this process died and left them running
  const forward = (signal: NodeJS.Signals) => copy.kill(signal);
  // added before this process's own handler goes, so that a signal not yet dispatched is not lost with its watcher
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, forward);
    process.off(signal, onSignal);
  }
  const code = await new Promise<number>((resolve) => copy.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 130 : 1))));
  process.exit(code);
}

/** Runs `main`, always runs the cleanups (reverse order), exits 1 on failure or past `limitMinutes` (15). */
export async function runBench(main: (cleanup: (fn: () => Promise<void> | void) => void) => Promise<void>, { limitMinutes = 15 } = {}): Promise<void> {
  const cleanups: (() => Promise<void> | void)[] = [];
  let failed = false;
  /** the cleanup a signal started: a second signal (Ctrl-C reaches the whole process group, and run-all sends SIGTERM too) and `main` failing meanwhile wait for it */
  let stopping: Promise<never> | undefined;
  const onSignal = () => {
    if (stopping) return;
    failed = true;
    stopping = runCleanups().then(() => process.exit(130));
  };
  const runCleanups = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (error) {
        console.error('cleanup failed:', error);
      }
    }
  };
  // the cleanups stop the benchmark's own databases and remove its folders, and a copy under the project's
  // Node waits for its run: embedded-postgres' own signal handlers ended the process first (exit 143)
  handleSignalsInstead(onSignal);
  await runUnderProjectNode(onSignal);
  // the whole benchmark is bounded: a hang ends it
  const watchdog = setTimeout(() => {
    console.error(`benchmark took more than ${limitMinutes} minutes: giving up`);
    failed = true;
    void runCleanups().then(() => process.exit(1));
  }, limitMinutes * 60_000);
  watchdog.unref();
  try {
    await main((fn) => cleanups.push(fn));
  } catch (error) {
    failed = true;
    console.error('BENCHMARK FAILED:', error instanceof Error ? error.stack ?? error.message : error);
  } finally {
    if (stopping) await stopping;
    await runCleanups();
    clearTimeout(watchdog);
  }
  process.exit(failed ? 1 : 0);
}

/**
 * The parts of a multipart/form-data body around one file part named `file` (text fields first, so
 * that the service sees `name` before the bytes): send `head`, the file's bytes, then `tail`.
 */
export function multipartFrame(fields: Record<string, string>, fileName: string, boundary = `crs-bench-${Math.random().toString(16).slice(2)}`) {
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    head: Buffer.from(head),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  };
}
