import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';
import { projectRoot } from '../../src/paths.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { adminPassword, call } from '../helpers/service.js';

/*
 * The embedded Postgres of a DATA_DIR belongs to the service that started it. A second start on the
 * same DATA_DIR used to take it for one left by a crash and stop it, under the running service; and a
 * start that failed after its database was up left that Postgres running without an owner.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** `node dist/app/main.js` with `env`, to its end: exit code and output. */
function runToEnd(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/app/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', ADMIN_PASSWORD: adminPassword, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

const postmasterOf = async (dataDir: string) =>
  Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]) || undefined;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('one service per DATA_DIR (embedded Postgres)', () => {
  it('refuses a second start on a DATA_DIR in use, and the first service keeps its database', { timeout: 120_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-data-dir-'));
    await fs.chmod(dataDir, 0o755);
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const first: ServiceProcess = await startServiceProcess({ PORT: String(await freePort()), DATA_DIR: dataDir, ADMIN_PASSWORD: adminPassword }, { timeoutMs: 90_000 });
    cleanups.push(() => first.stop());
    const postmaster = await postmasterOf(dataDir);

    const second = await runToEnd({ PORT: String(await freePort()), DATA_DIR: dataDir });
    expect(second.code).not.toBe(0);
    expect(second.output).toContain('another service uses this DATA_DIR');

    expect(await postmasterOf(dataDir)).toBe(postmaster);
    expect((await call(`${first.baseUrl}/readyz`)).status).toBe(200);
    const login = await call(`${first.baseUrl}/api/v1/authenticate?user=admin&password=${adminPassword}`, { method: 'POST' });
    expect(login.status).toBe(200);
  });

  it('stops its embedded Postgres when the start fails after it (the port is taken)', { timeout: 120_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-data-dir-'));
    await fs.chmod(dataDir, 0o755);
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    const taken = (squatter.address() as net.AddressInfo).port;

    const failed = await runToEnd({ PORT: String(taken), DATA_DIR: dataDir });
    expect(failed.code).not.toBe(0);
    expect(failed.output).toContain('EADDRINUSE');
    const postmaster = await postmasterOf(dataDir);
    expect(postmaster === undefined || !alive(postmaster)).toBe(true);
  });
});
