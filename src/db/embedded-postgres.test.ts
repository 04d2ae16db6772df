import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startServiceProcess } from '../../test/helpers/process.js';
import { call } from '../../test/helpers/service.js';
import { createLogger } from '../logger.js';
import { freePort } from '../net.js';
import { parallelWorkersPerGather, sharedBuffersMb, startEmbeddedPostgres } from './embedded-postgres.js';
import { createOrm } from './orm.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('startEmbeddedPostgres', () => {
  it('starts on another port when the one it chose was taken before the postmaster bound it', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    const taken = (squatter.address() as net.AddressInfo).port;
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-pg-test-'));
    cleanups.push(() => fs.rm(directory, { recursive: true, force: true }));
    await fs.chmod(directory, 0o755); // run as root, the cluster belongs to a postgres user that must get in

    const cluster = await startEmbeddedPostgres({ directory: path.join(directory, 'pg'), logger: createLogger('silent'), ephemeral: true, port: taken });
    cleanups.push(() => cluster.stop());
    const port = Number(new URL(cluster.url).port);
    expect(port).not.toBe(taken);
    // the postmaster listens there
    await new Promise<void>((resolve, reject) => {
      const probe = net.connect({ host: '127.0.0.1', port }, () => {
        probe.end();
        resolve();
      });
      probe.once('error', reject);
    });
  });

  it('stops at once when its postmaster was killed, and says that it ended (stop() waited for an exit that had happened)', async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-pg-test-'));
    cleanups.push(() => fs.rm(directory, { recursive: true, force: true }));
    await fs.chmod(directory, 0o755);
    const lines: string[] = [];
    const { pino } = await import('pino');
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const cluster = await startEmbeddedPostgres({ directory: path.join(directory, 'pg'), logger, ephemeral: true });
    const postmaster = Number((await fs.readFile(path.join(directory, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(postmaster, 'SIGKILL');
    await expect.poll(() => lines.some((line) => line.includes('embedded postgres ended unexpectedly')), { timeout: 10_000 }).toBe(true);
    const started = Date.now();
    await cluster.stop();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('sizes its buffer cache to a quarter of the memory, between 128 MB and 1 GB, and gives a statement no more workers than the cores beside its own', async () => {
    expect([sharedBuffersMb(256 * 2 ** 20), sharedBuffersMb(2 * 2 ** 30), sharedBuffersMb(64 * 2 ** 30)]).toEqual([128, 512, 1024]);
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-pg-test-'));
    cleanups.push(() => fs.rm(directory, { recursive: true, force: true }));
    await fs.chmod(directory, 0o755);
    const cluster = await startEmbeddedPostgres({ directory: path.join(directory, 'pg'), logger: createLogger('silent'), ephemeral: true });
    cleanups.push(() => cluster.stop());
    const orm = await createOrm(cluster.url, createLogger('silent'), 1);
    cleanups.push(() => orm.close(true));
    const [row] = await orm.em.getConnection().execute<{ setting: string }[]>(`select setting::int * 8 / 1024 as setting from pg_settings where name = 'shared_buffers'`);
    expect(Number(row!.setting)).toBe(sharedBuffersMb());
    expect([1, 2, 3, 16].map((cores) => parallelWorkersPerGather(cores))).toEqual([0, 1, 2, 2]);
    const [workers] = await orm.em.getConnection().execute<{ setting: string }[]>(`select setting from pg_settings where name = 'max_parallel_workers_per_gather'`);
    expect(Number(workers!.setting)).toBe(parallelWorkersPerGather());
  });
});

/** The server address of a connection by `url`: null over a Unix-domain socket. */
async function serverAddress(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ address: string | null }>('select inet_server_addr()::text as address')).rows[0]!.address;
  } finally {
    await client.end();
  }
}

async function clusterIn(directory: string, port?: number) {
  const cluster = await startEmbeddedPostgres({ directory, logger: createLogger('silent'), ephemeral: true, port });
  cleanups.push(() => cluster.stop());
  return cluster;
}

async function scratchFolder(prefix: string): Promise<string> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rm(folder, { recursive: true, force: true }));
  await fs.chmod(folder, 0o755); // run as root, the cluster belongs to a postgres user that must get in
  return folder;
}

describe('the exit of a process that uses embedded postgres', () => {
  const moduleUrl = new URL('./embedded-postgres.js', import.meta.url).href;
  /** `script` run as an ES module after importing this module: the process, and its exit code and output */
  const runNode = (script: string) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `import * as embedded from ${JSON.stringify(moduleUrl)};\n${script}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const ended = new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, output })));
    return { child, ended, output: () => output };
  };

  it('keeps the exit code the process set, and prints nothing (embedded-postgres ended every process with 0: failing test runs passed)', async () => {
    expect(await runNode('process.exitCode = 3;').ended).toEqual({ code: 3, signal: null, output: '' });
  });

  it('still stops a running cluster on SIGTERM before the process ends', { timeout: 90_000 }, async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-pg-exit-'));
    cleanups.push(() => fs.rm(directory, { recursive: true, force: true }));
    await fs.chmod(directory, 0o755);
    const pidFile = path.join(directory, 'pg', 'postmaster.pid');
    const run = runNode(`
      const { createLogger } = await import(${JSON.stringify(new URL('../logger.js', import.meta.url).href)});
      await embedded.startEmbeddedPostgres({ directory: ${JSON.stringify(path.join(directory, 'pg'))}, logger: createLogger('silent'), ephemeral: true });
      console.log('started');`);
    while (!run.output().includes('started')) {
      expect(run.child.exitCode, run.output()).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await fs.stat(pidFile)).isFile()).toBe(true);
    run.child.kill('SIGTERM');
    expect((await run.ended).code).toBe(128 + 15);
    await expect(fs.stat(pidFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('how the service reaches the embedded cluster', () => {
  it('over a Unix-domain socket in the cluster directory; TCP on loopback stays open for other clients', async () => {
    const directory = path.join(await scratchFolder('embedded-pg-socket-'), 'pg');
    const cluster = await clusterIn(directory);
    const url = new URL(cluster.url);
    expect(decodeURIComponent(url.hostname)).toBe(directory);
    expect(cluster.urlFor('template1')).toContain(`@${url.host}/template1`);
    expect(await serverAddress(cluster.url)).toBeNull();
    url.hostname = '127.0.0.1';
    expect(await serverAddress(url.toString())).toBe('127.0.0.1/32');
  });

  it('over TCP when the socket path would not fit in a socket address (107 bytes)', async () => {
    const directory = path.join(await scratchFolder('embedded-pg-long-'), 'a-folder-name-long-enough-to-push-the-socket-path-past-its-limit', 'pg');
    expect(Buffer.byteLength(path.join(directory, '.s.PGSQL.65535'))).toBeGreaterThan(107);
    const cluster = await clusterIn(directory);
    expect(new URL(cluster.url).hostname).toBe('127.0.0.1');
    expect(await serverAddress(cluster.url)).toBe('127.0.0.1/32');
  });

  it('over TCP when the socket cannot be made there (the cluster starts all the same)', async () => {
    const directory = path.join(await scratchFolder('embedded-pg-nosocket-'), 'pg');
    const port = await freePort();
    await (await clusterIn(directory, port)).stop();
    // something that is not a socket holds the socket's name: bind fails, as on a file system without sockets
    await fs.mkdir(path.join(directory, `.s.PGSQL.${port}`, 'in-the-way'), { recursive: true });
    const cluster = await clusterIn(directory, port);
    expect(new URL(cluster.url).hostname).toBe('127.0.0.1');
    expect(Number(new URL(cluster.url).port)).toBe(port);
    expect(await serverAddress(cluster.url)).toBe('127.0.0.1/32');
  });
});

describe('a private DATA_DIR, as `DATA_DIR=$(mktemp -d) npm start` gives (tests run as root here)', () => {
  const asRoot = process.getuid?.() === 0;
  const postgresGid = async () => Number((await import('node:child_process')).execFileSync('id', ['-g', 'postgres']).toString());

  it('starts: the data folder is opened to the postgres group only (pass, not list)', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-private-'));
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    expect((await fs.stat(dataDir)).mode & 0o777).toBe(0o700);
    const service = await startServiceProcess({ DATA_DIR: dataDir, PORT: String(await freePort()), ADMIN_PASSWORD: 'private-dir-password' });
    cleanups.push(() => service.stop());
    const login = await call(`${service.baseUrl}/api/v1/authenticate?user=admin&password=private-dir-password`, { method: 'POST' });
    expect(login.status).toBe(200);
    const folder = await fs.stat(dataDir);
    if (asRoot) {
      expect(folder.mode & 0o777).toBe(0o710);
      expect(folder.gid).toBe(await postgresGid());
    } else {
      // without root, Postgres runs as the service's own user: nothing to open
      expect(folder.mode & 0o777).toBe(0o700);
    }
  });

  it('stops with a message that says what to change when a folder above DATA_DIR keeps postgres out', async () => {
    const outer = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-private-outer-'));
    cleanups.push(() => fs.rm(outer, { recursive: true, force: true }));
    const start = startEmbeddedPostgres({ directory: path.join(outer, 'data', 'pg'), logger: createLogger('silent'), ephemeral: true });
    if (asRoot) {
      await expect(start).rejects.toThrow(`cannot enter ${outer} (mode 700, owner uid 0)`);
      await expect(start).rejects.toThrow(`chmod o+x ${outer}`);
      // the operator's folder is left as it was
      expect((await fs.stat(outer)).mode & 0o777).toBe(0o700);
    } else {
      const cluster = await start;
      cleanups.push(() => cluster.stop());
      expect(cluster.url).toMatch(/^postgresql:/);
    }
  });
});
