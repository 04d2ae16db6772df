import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/net.js';
import { projectRoot } from '../../src/paths.js';
import { adminPassword } from './service.js';

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  /** what the process printed (the last 64 kB) */
  output: () => string;
  /** resolves with the exit code (or signal) */
  exited: Promise<number | NodeJS.Signals | null>;
  /** SIGTERM (the service drains and stops its Postgres), SIGKILL after 30 s */
  stop(): Promise<void>;
}

/**
 * Starts `node --expose-gc dist/app/main.js` as a user would (env must name PORT), and waits until it answers
 * /readyz. Used by the tests that kill and restart the service, and by the benchmarks. PORT was free
 * when the caller chose it; when another process took it meanwhile, the service starts again on
 * another free port (`baseUrl` tells which).
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === 3) throw error;
      env = { ...env, PORT: String(await freePort()) };
    }
  }
}

/**
 * Another process of the whole service on `service`'s database, with a data folder of its own (removed
 * when it stops): a second node of a deployment, for what every process must follow. `env` adds settings.
 */
export async function startSecondProcess(service: { config: { DATABASE_URL?: string } }, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-process-b-'));
  const removeDataDir = () => fs.rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
  try {
    const second = await startServiceProcess({
      PORT: String(await freePort()),
      DATABASE_URL: service.config.DATABASE_URL!,
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: adminPassword,
      LOG_LEVEL: 'warn',
      ...env,
    });
    return { ...second, stop: () => second.stop().then(removeDataDir) };
  } catch (error) {
    await removeDataDir();
    throw error;
  }
}

/**
 * Job workers in processes of their own (ROLE=worker, JOB_CONCURRENCY=1), one per name, sharing the
 * database and storage of a test service (which should run with JOB_CONCURRENCY=0); `env` adds settings.
 */
export async function startWorkerProcesses(
  service: { config: { DATABASE_URL?: string; contentStoragePath: string; cacheStoragePath: string }; dataDir: string },
  names: string[],
  env: Record<string, string>,
): Promise<Map<string, ServiceProcess>> {
  const workers = new Map<string, ServiceProcess>();
  for (const name of names) {
    workers.set(
      name,
      await startServiceProcess({
        ROLE: 'worker',
        WORKER_NAME: name,
        PORT: String(await freePort()),
        DATABASE_URL: service.config.DATABASE_URL!,
        DATA_DIR: service.dataDir,
        CONTENT_STORAGE_PATH: service.config.contentStoragePath,
        CACHE_STORAGE_PATH: service.config.cacheStoragePath,
        ADMIN_PASSWORD: adminPassword,
        JOB_CONCURRENCY: '1',
        LOG_LEVEL: 'warn',
        ...env,
      }),
    );
  }
  return workers;
}

class PortTakenError extends Error {}

interface StartOptions {
  timeoutMs?: number;
  nodeArgs?: string[];
  /** another built copy of the project to start, from its own folder (default: this one, from the current folder) */
  root?: string;
}

async function startOnce(env: Record<string, string>, options: StartOptions): Promise<ServiceProcess> {
  // --expose-gc: as `npm start` runs it (the upload path paces garbage collection)
  const child = spawn(process.execPath, ['--expose-gc', ...(options.nodeArgs ?? []), path.join(options.root ?? projectRoot, 'dist/app/main.js')], {
    ...(options.root ? { cwd: options.root } : {}),
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const keep = (chunk: Buffer) => {
    text += chunk.toString();
    if (text.length > 64_000) text = text.slice(-32_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  const baseUrl = `http://127.0.0.1:${env.PORT}${env.BASE_PATH ?? ''}`;
  // a first start (initdb, migrations) takes 11 s at rest and went past 60 s on a loaded 2-core machine
  const until = Date.now() + (options.timeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null) {
      const message = `service exited early (${child.exitCode}):\n${text}`;
      throw text.includes('EADDRINUSE') ? new PortTakenError(message) : new Error(message);
    }
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`service not ready in time:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, pid: child.pid!, baseUrl, output: () => text, exited, stop };
}
